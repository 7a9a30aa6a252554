/**
 * The fault campaign of {@code ./chaos.sh}: a ZooKeeper ensemble in processes of its own, its
 * links (server to server, application to server) through {@link io.github.zklock.test.TcpProxy}
 * proxies that a partition cuts, the sample application in several JVMs, a nemesis on a seeded
 * schedule (partitions, pauses, crashes, clock jumps, CPU starvation), workloads whose history is
 * recorded, checkers over those histories, and the report. Not a library: run by the script only.
 *
 * <p>The module's tests hold the chaos tests of the lock registry too, against real ZooKeeper
 * servers (curator-test), some with clients in child JVMs: server-side session expiry, a frozen
 * network link (a loopback TCP proxy), leader and follower crashes of a three-server ensemble, a
 * holder killed with SIGKILL, a multi-JVM grant history checked for overlaps, token order and lost
 * updates, the hand-over of a group's leadership when its leader's link freezes or drops, a release
 * while the connection is lost, and the server closing a holder's session with each client
 * socket. Each lock test prints its figures as {@code CHAOS ...} lines on stdout (also appended to
 * {@code target/chaos/report.txt}), the fault tests also one {@code FAULT ...} line per case, the
 * leadership test as {@code LEADERSHIP ...} lines on stdout. The long soak runs only with
 * {@code -Dzklock.soak=true}. They run in this module, beside the core's build rather than after
 * it, so that the rest of the reactor does not wait for them.
 */
@NullMarked
package io.github.zklock.chaos;

import org.jspecify.annotations.NullMarked;
