package io.github.zklock.chaos;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The TCP connections on the loopback interface, as Linux lists them in {@code /proc/net/tcp} and
 * {@code /proc/net/tcp6}, and the sockets of this process ({@code /proc/self/fd}): enough to tell
 * which process opened a connection to a port.
 */
final class LoopbackConnections {

	private static final List<Path> TABLES = List.of(Path.of("/proc/net/tcp"), Path.of("/proc/net/tcp6"));

	/** {@code st} of an established connection in the tables. */
	private static final String ESTABLISHED = "01";

	private LoopbackConnections() {
	}

	static boolean available() {
		return Files.isReadable(TABLES.get(0)) && Files.isDirectory(Path.of("/proc/self/fd"));
	}

	/**
	 * The established connections whose remote end is on the loopback interface (IPv4, or IPv4
	 * mapped into IPv6), one entry per end that a socket of this host holds.
	 */
	static List<Connection> established() throws IOException {
		List<Connection> connections = new ArrayList<>();
		for (Path table : TABLES) {
			if (!Files.isReadable(table)) {
				continue;
			}
			List<String> lines = Files.readAllLines(table);
			for (String line : lines.subList(1, lines.size())) {
				// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
				String[] fields = line.trim().split("\\s+");
				String[] local = fields[1].split(":");
				String[] remote = fields[2].split(":");
				if (fields[3].equals(ESTABLISHED) && isLoopback(remote[0])) {
					connections.add(new Connection(Integer.parseInt(local[1], 16), Integer.parseInt(remote[1], 16),
							Long.parseLong(fields[9])));
				}
			}
		}
		return connections;
	}

	/** The inodes of this process's sockets. */
	static Set<Long> socketsOfThisProcess() throws IOException {
		Set<Long> inodes = new HashSet<>();
		try (Stream<Path> descriptors = Files.list(Path.of("/proc/self/fd"))) {
			for (Path descriptor : descriptors.toList()) {
				String target;
				try {
					target = Files.readSymbolicLink(descriptor).toString();
				}
				catch (IOException ex) {
					continue; // closed since the listing
				}
				if (target.startsWith("socket:[")) {
					inodes.add(Long.parseLong(target.substring("socket:[".length(), target.length() - 1)));
				}
			}
		}
		return inodes;
	}

	/** 127.0.0.1 as the tables write it: little-endian hex, alone or after the IPv4-mapped prefix. */
	private static boolean isLoopback(String address) {
		return address.equals("0100007F") || address.equals("0000000000000000FFFF00000100007F");
	}

	/**
	 * One end of an established connection.
	 * @param localPort the port of this end
	 * @param remotePort the port of the other end
	 * @param inode the socket's inode, which {@code /proc/<pid>/fd} links name
	 */
	record Connection(int localPort, int remotePort, long inode) {
	}

}
