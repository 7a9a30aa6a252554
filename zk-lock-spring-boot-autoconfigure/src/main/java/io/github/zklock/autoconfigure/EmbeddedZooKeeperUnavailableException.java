package io.github.zklock.autoconfigure;

/**
 * Thrown at start-up when {@code zk.lock.embedded.enabled=true} but
 * {@code io.github.zklock:zk-lock-test}, which provides the in-process server (with
 * {@code org.apache.curator:curator-test}), is not on the class path. The start fails rather than
 * silently connecting to {@code zk.lock.connect-string}; a failure analyzer tells what to add or
 * change.
 */
public class EmbeddedZooKeeperUnavailableException extends IllegalStateException {

	private static final long serialVersionUID = 1L;

	/**
	 * Create an exception naming the missing dependency.
	 */
	public EmbeddedZooKeeperUnavailableException() {
		super("zk.lock.embedded.enabled=true needs io.github.zklock:zk-lock-test (with org.apache.curator:curator-test) "
				+ "on the class path, which provides the in-process ZooKeeper server: add it as a dependency, or set "
				+ "zk.lock.embedded.enabled=false and point zk.lock.connect-string at a ZooKeeper ensemble");
	}

}
