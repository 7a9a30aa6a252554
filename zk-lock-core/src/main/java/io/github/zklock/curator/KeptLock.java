package io.github.zklock.curator;

import java.time.Instant;

import io.github.zklock.LockMode;

/**
 * A znode this application keeps, held by nobody (see {@link KeptLocks}), as an operator sees it
 * ({@link CuratorLockAdmin#describeKeptLocks()}): the next request of this application for the
 * key is granted on it without a ZooKeeper write, another participant's request makes this
 * application delete it.
 *
 * @param path the full znode path of the lock
 * @param mode the mode its grants were made in: EXCLUSIVE or WRITE
 * @param node the kept lock znode
 * @param fencingToken its fencing token (the czxid), which the next grant on it carries too
 * @param grants how many grants the znode has served so far
 * @param keptSince when its last grant ended, by this application's clock
 */
public record KeptLock(String path, LockMode mode, String node, long fencingToken, int grants, Instant keptSince) {
}
