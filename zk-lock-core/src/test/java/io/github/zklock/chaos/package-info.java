/**
 * Chaos tests of the lock registry against real ZooKeeper servers (curator-test), some with
 * clients in child JVMs: server-side session expiry, a frozen network link (a loopback TCP
 * proxy), leader and follower crashes of a three-server ensemble, a holder killed with SIGKILL,
 * and a multi-JVM grant history checked for overlaps, token order and lost updates. Each test
 * prints its figures as {@code CHAOS ...} lines on stdout (also appended to
 * {@code target/chaos/report.txt}). The long soak runs only with {@code -Dzklock.soak=true}.
 */
package io.github.zklock.chaos;
