package io.github.zklock.chaos;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;

/**
 * The main class of each server process of an {@link Ensemble}: runs ZooKeeper's
 * {@code QuorumPeerMain} with the same arguments, and ends the process at once when the process
 * that started it is gone.
 *
 * <p>The {@link Ensemble} kills its servers on {@link Ensemble#close()} and from a shutdown hook,
 * but a JVM that is itself killed ({@code SIGKILL}, a test run's timeout) runs no hook. Its
 * children would live on, holding ports. Here the server reads its standard input, a pipe whose
 * other end only the starting JVM holds: the operating system closes that end when the JVM ends,
 * however it ends, and the read returns end of stream.
 *
 * <p>Runs in the server's JVM, on a class path of Debian's jars and this one class (copied there by
 * the {@link Ensemble}): it uses the JDK alone and reaches ZooKeeper by reflection. Not meant to
 * be called from the campaign's own code.
 */
public final class ServerLauncher {

	/** ZooKeeper's server main class, what Debian's {@code zkServer.sh} runs. */
	private static final String QUORUM_PEER_MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain";

	private ServerLauncher() {
	}

	/**
	 * Watch the standard input, then run the server.
	 * @param args {@code QuorumPeerMain}'s arguments: the path of the server's {@code zoo.cfg}
	 * @throws Throwable whatever {@code QuorumPeerMain.main} throws (it normally exits the JVM
	 * itself)
	 */
	public static void main(String[] args) throws Throwable {
		Thread watchdog = new Thread(ServerLauncher::haltWhenParentIsGone, "parent-watchdog");
		watchdog.setDaemon(true);
		watchdog.start();
		try {
			Class.forName(QUORUM_PEER_MAIN).getMethod("main", String[].class).invoke(null, (Object) args);
		}
		catch (InvocationTargetException ex) {
			throw ex.getCause();
		}
	}

	private static void haltWhenParentIsGone() {
		try {
			while (System.in.read() >= 0) {
				// nobody writes; a byte would not mean anything
			}
		}
		catch (IOException ex) {
			// the pipe is broken: the parent is gone as well
		}
		System.err.println("zk-lock-chaos: the process that started this server is gone; halting");
		Runtime.getRuntime().halt(1);
	}

}
