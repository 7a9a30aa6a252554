/**
 * JMH benchmarks of zk-lock's lock path: the {@code @DistributedLock} proxy and {@code LockTemplate}
 * against the raw Curator recipes, the plain ZooKeeper client, Spring Integration's
 * {@code ZookeeperLockRegistry} and lock4j's ZooKeeper executor, all on one ZooKeeper server per
 * fork. The states are set up by JMH before the first operation (fields stay unset until then). Run
 * them with {@code ./bench.sh}, see {@link io.github.zklock.benchmarks.run.BenchMain}.
 */
package io.github.zklock.benchmarks;
