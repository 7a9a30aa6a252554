/**
 * The fault campaign of {@code ./chaos.sh}: a ZooKeeper ensemble in processes of its own, its
 * links (server to server, application to server) through {@link io.github.zklock.test.TcpProxy}
 * proxies that a partition cuts, the sample application in several JVMs, a nemesis on a seeded
 * schedule (partitions, pauses, crashes, clock jumps, CPU starvation), workloads whose history is
 * recorded, checkers over those histories, and the report. Not a library: run by the script only.
 */
@NullMarked
package io.github.zklock.chaos;

import org.jspecify.annotations.NullMarked;
