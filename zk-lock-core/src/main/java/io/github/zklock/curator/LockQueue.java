package io.github.zklock.curator;

import java.util.List;

/**
 * Who holds and waits for the lock of one key ({@link CuratorLockAdmin#describeQueue(String)}).
 *
 * @param path the lock path
 * @param participants its lock znodes, of any application, in queue order
 * @param waiters how many wait for it: its znodes that do not hold, plus the threads of this
 * application that wait for it without a znode in its queue (in the application's local queue or
 * its local hand-off chain); the local queues of other applications are not known here
 * @param localWaiters how many threads of this application wait for it, with a znode in its
 * queue or not
 */
public record LockQueue(String path, List<LockParticipant> participants, int waiters, int localWaiters) {
}
