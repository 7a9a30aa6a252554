package io.github.zklock.curator;

/**
 * A process that holds or waits for locks, as written in the data of the lock znodes it creates
 * ({@code <pid>@<host>}).
 *
 * @param pid the process id
 * @param host the host name the process reports
 */
public record LockOwner(long pid, String host) {
}
