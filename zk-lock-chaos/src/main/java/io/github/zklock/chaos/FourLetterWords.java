package io.github.zklock.chaos;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * ZooKeeper's four-letter-word commands ({@code srvr}, {@code mntr}), sent to a server's own client
 * port on 127.0.0.1, never through a proxy: what a server says about itself, whatever the
 * partitions. Each command is one short connection with short timeouts, so that a server that is
 * down, paused or overloaded reads as "not serving" within a few seconds instead of blocking the
 * caller. Stateless and thread-safe.
 */
final class FourLetterWords {

	private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(1);

	private static final Duration READ_TIMEOUT = Duration.ofSeconds(2);

	private static final Pattern MODE = Pattern.compile("^Mode: (\\w+)$", Pattern.MULTILINE);

	private static final Pattern ZXID = Pattern.compile("^Zxid: 0x([0-9a-fA-F]+)$", Pattern.MULTILINE);

	private FourLetterWords() {
	}

	/**
	 * Ask a server what it is ({@code srvr}).
	 * @param clientPort the server's client port on 127.0.0.1
	 * @return its role and last zxid; {@link Role#NOT_SERVING} with zxid -1 if it does not answer
	 * or answers that it is not serving (it is looking for a leader)
	 */
	static Status srvr(int clientPort) {
		String answer = send(clientPort, "srvr").orElse("");
		Matcher mode = MODE.matcher(answer);
		Matcher zxid = ZXID.matcher(answer);
		if (!mode.find() || !zxid.find()) {
			return new Status(Role.NOT_SERVING, -1);
		}
		Role role = switch (mode.group(1)) {
			case "leader" -> Role.LEADER;
			case "follower" -> Role.FOLLOWER;
			default -> Role.NOT_SERVING;
		};
		return new Status(role, Long.parseUnsignedLong(zxid.group(1), 16));
	}

	/**
	 * Ask a server for its monitoring values ({@code mntr}).
	 * @param clientPort the server's client port on 127.0.0.1
	 * @return the values by name in the server's order; empty if it does not answer or is not
	 * serving
	 */
	static Map<String, String> mntr(int clientPort) {
		Map<String, String> values = new LinkedHashMap<>();
		for (String line : send(clientPort, "mntr").orElse("").split("\n")) {
			int tab = line.indexOf('\t');
			if (tab > 0) {
				values.put(line.substring(0, tab), line.substring(tab + 1).trim());
			}
		}
		return values;
	}

	/**
	 * Send a command and read the answer to its end (the server closes the connection).
	 * @param clientPort the server's client port on 127.0.0.1
	 * @param command a four-letter word the server's {@code 4lw.commands.whitelist} allows
	 * @return the answer; empty if the connection is refused, times out or breaks (the server is
	 * down, paused or too slow to count as serving)
	 */
	static Optional<String> send(int clientPort, String command) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), clientPort),
					(int) CONNECT_TIMEOUT.toMillis());
			socket.setSoTimeout((int) READ_TIMEOUT.toMillis());
			OutputStream out = socket.getOutputStream();
			out.write(command.getBytes(StandardCharsets.US_ASCII));
			out.flush();
			InputStream in = socket.getInputStream();
			return Optional.of(new String(in.readAllBytes(), StandardCharsets.UTF_8));
		}
		catch (IOException ex) {
			return Optional.empty();
		}
	}

	/** A server's role as {@code srvr} states it. */
	enum Role {

		/** Leads the ensemble and serves clients. */
		LEADER,

		/** Follows a leader and serves clients. */
		FOLLOWER,

		/** Down, paused, looking for a leader, or anything else that does not serve clients. */
		NOT_SERVING

	}

	/**
	 * What {@code srvr} said.
	 * @param role the server's role
	 * @param zxid its last zxid (the high 32 bits are the epoch of its leader), -1 when not serving
	 */
	record Status(Role role, long zxid) {

		/** Whether the server serves clients, as leader or follower. */
		boolean serving() {
			return this.role != Role.NOT_SERVING;
		}

	}

}
