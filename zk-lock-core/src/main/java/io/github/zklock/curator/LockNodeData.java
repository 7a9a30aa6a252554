package io.github.zklock.curator;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;

/**
 * The data of every lock znode this library creates: {@code <pid>@<hostname>} of the process,
 * the convention of the JVM's {@code RuntimeMXBean} name, so that an operator listing a lock's
 * participants sees which process holds or waits (Curator's own default is the client's IP
 * address). It travels with the create: no request of its own.
 */
final class LockNodeData {

	private static final String HOST = hostName();

	/** The identity of this process, computed once. */
	static final String IDENTITY = ProcessHandle.current().pid() + "@" + HOST;

	private static final byte[] BYTES = IDENTITY.getBytes(StandardCharsets.UTF_8);

	private LockNodeData() {
	}

	/** The bytes to create lock znodes with (shared: callers must not change them). */
	static byte[] bytes() {
		return BYTES;
	}

	/** This process, as it writes itself into lock znodes. */
	static LockOwner self() {
		return new LockOwner(ProcessHandle.current().pid(), HOST);
	}

	/** The host name this JVM reports, or {@code localhost} when it cannot be resolved. */
	static String hostName() {
		try {
			return InetAddress.getLocalHost().getHostName();
		}
		catch (UnknownHostException ex) {
			return "localhost";
		}
	}

	/**
	 * Read a lock znode's data as {@code <pid>@<host>}.
	 * @param data the data, as a string
	 * @return the owner, or {@code null} if the data is something else (another client's, such as
	 * raw Curator's IP address)
	 */
	static @Nullable LockOwner parse(String data) {
		int at = data.indexOf('@');
		if (at <= 0 || at == data.length() - 1) {
			return null;
		}
		try {
			return new LockOwner(Long.parseLong(data.substring(0, at)), data.substring(at + 1));
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

}
