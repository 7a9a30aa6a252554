package io.github.zklock.curator;

import java.util.List;

/**
 * What a revocation of a lock did ({@link CuratorLockAdmin#revoke}).
 *
 * @param path the lock path
 * @param action what was done
 * @param holders the holders found, before the action
 * @param released whether every holder's znode was gone when the call returned
 */
public record Revocation(String path, RevocationAction action, List<LockParticipant> holders, boolean released) {
}
