package io.github.zklock.curator;

import java.util.List;

import org.apache.zookeeper.Watcher;
import org.jspecify.annotations.Nullable;

/**
 * The ZooKeeper side of a lock, as the local queue ({@link LockKey}) and the acquisitions
 * ({@link ZnodeAcquisition}) see it: the requests the lock recipes send, each answered later
 * (on the client's event thread; on the calling thread only when the request could not be sent),
 * and what the client knows of its session: callers send requests outside their monitors. {@link CuratorZnodes}
 * sends them through Curator's background operations; the tests put an in-memory ZooKeeper behind
 * it, so that the interleavings of the queue and the acquisitions are explored without network
 * timing.
 *
 * <p>One session's requests are served in the order they were sent, as ZooKeeper serves them: a
 * listing sent after a create sees the created znode, a create sent after a delete does not find
 * the deleted one.
 */
interface Znodes {

	/**
	 * Create an ephemeral sequential znode with the process's {@link LockNodeData} as Curator's lock
	 * recipes create theirs: protected (a GUID in its name, so that a create cut by a connection
	 * loss is found again or deleted rather than left behind) and with missing parents created as
	 * containers. When the parents are missing, the create is refused, and sent again once their
	 * creates were sent: {@code resent} runs right after each such send, on the thread that
	 * delivers answers and before that create's answer can be delivered, so that a listing sent
	 * there is served after the znode was created.
	 * With {@code parentMissing}, the caller knows the parent to be missing (it has just been made
	 * missing parents of its own): the first create is not tried, the parents' creates and the
	 * create are sent at once.
	 * @param path the path the sequence number is appended to
	 * @param parentMissing whether to create the parents before the first create
	 * @param resent run after each send of the create again, for the caller's listing
	 * @param answer told the created znode's full path and czxid (0 when Curator found the znode
	 * again after a connection loss), or the error code
	 */
	void create(String path, boolean parentMissing, Runnable resent, Answer<Created> answer);

	/**
	 * List the children of a znode.
	 * @param path the znode
	 * @param watcher left on the children, or {@code null} for none
	 * @param answer told the children's names, or the error code ({@code NONODE} when the znode
	 * does not exist)
	 */
	void children(String path, @Nullable Watcher watcher, Answer<List<String>> answer);

	/**
	 * Watch a znode for its deletion or a change of its data.
	 * @param path the znode
	 * @param watcher the watcher
	 * @param answer told {@code true} when the znode exists (the watch is set), {@code false}
	 * when it does not (no watch is left), or the error code
	 */
	void watch(String path, Watcher watcher, Answer<Boolean> answer);

	/**
	 * Watch a kept znode of this application for its deletion or a change of its data, and read
	 * whether it is marked for revocation already (Curator's {@code Revoker}, while it was held).
	 * @param path the znode
	 * @param watcher the watcher
	 * @param answer told {@code true} when the znode exists unmarked (the watch is set),
	 * {@code false} when it does not exist or carries the revocation mark, or the error code
	 */
	void watchKept(String path, Watcher watcher, Answer<Boolean> answer);

	/**
	 * Ask whether a znode exists, leaving no watch.
	 * @param path the znode
	 * @param answer told {@code true} or {@code false}, or the error code
	 */
	void exists(String path, Answer<Boolean> answer);

	/**
	 * Delete a znode, guaranteed (retried after a connection loss until it is done or the session
	 * ends, which deletes an ephemeral znode anyway), quietly (a znode already gone is no failure).
	 * @param path the znode
	 * @param answer told {@code OK} once deleted (or gone already), or the error code of a delete
	 * that failed for now (Curator goes on retrying a guaranteed one)
	 */
	void delete(String path, Answer<Void> answer);

	/**
	 * Delete a znode once, telling whether it was there: neither guaranteed nor quiet (a condition's
	 * signal, which passes a waiter gone already over for the next one). Curator resends it after a
	 * connection loss within its retry policy, so a delete applied before the loss may answer
	 * {@code NONODE}.
	 * @param path the znode
	 * @param answer told {@code OK} when deleted, {@code NONODE} when it was not there, or the error code
	 */
	void deleteOnce(String path, Answer<Void> answer);

	/**
	 * Return which ZooKeeper handle, and so which session, the client uses now: it changes only when
	 * the session expired (or the ensemble changed). Local state.
	 * @return the session instance
	 */
	long sessionInstance();

	/**
	 * Return whether the client is connected now. Local state.
	 * @return whether connected
	 */
	boolean connected();

	/**
	 * Return the session timeout the server granted, in milliseconds, 0 while unknown.
	 * @return the negotiated session timeout
	 */
	int sessionTimeoutMs();

	/**
	 * Return how long the client waits for a connection before a request fails, in milliseconds:
	 * the bound of a synchronous one-attempt request and of a synchronous release.
	 * @return the connection timeout
	 */
	int connectionTimeoutMs();

	/**
	 * An answer to a request, given once: on the client's event thread, or on the calling thread
	 * when the request could not be sent (the client is closed, say).
	 * @param <T> what a successful answer carries
	 */
	@FunctionalInterface
	interface Answer<T> {

		/**
		 * @param code ZooKeeper's result code ({@code KeeperException.Code.OK.intValue()} on success)
		 * @param value what the request returns on success, else {@code null}
		 */
		void answer(int code, @Nullable T value);

	}

	/**
	 * A created znode.
	 * @param path its full path
	 * @param czxid the zxid of its create, 0 when unknown
	 * @param parentsCreated whether its parents were found missing and created
	 */
	record Created(String path, long czxid, boolean parentsCreated) {
	}

}
