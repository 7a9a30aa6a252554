package io.github.zklock.chaos;

import java.io.Closeable;
import java.io.IOException;
import java.time.Duration;

import io.github.zklock.test.TcpProxy;
import org.jspecify.annotations.Nullable;

/**
 * The links between the servers of an {@link Ensemble}: for each ordered pair of servers
 * {@code (from, to)}, {@code from != to}, one proxy to {@code to}'s quorum port and one to its
 * election port. Server {@code from}'s configuration names these proxies as {@code to}'s
 * addresses, so every connection {@code from} opens to {@code to} passes through them.
 *
 * <p>ZooKeeper keeps one election connection per pair, the one the server with the higher id
 * opened (the lower one's connection is closed on arrival and answered by one in the other
 * direction); a follower's connection to its leader is opened by the follower. Which proxy of a
 * pair carries the traffic depends on who opened it, so a cut always freezes all four proxies of
 * a pair.
 *
 * <p>A follower connects to its new leader the moment it learns of it, which may be a moment before
 * the leader binds its quorum port. A direct connection would be refused, and ZooKeeper tries
 * again (five times, a second apart, within {@code initLimit} ticks); a proxy would accept it and
 * then close it, and ZooKeeper gives up on a closed connection: the follower goes back to the
 * election and the leader waits for it {@code initLimit} ticks in vain. The quorum proxies
 * therefore have the patience of ZooKeeper's retries ({@link TcpProxy#start(int, Duration)}).
 *
 * <p>Servers are numbered from 1 ({@code myid}). Thread-safe: the cut state is guarded by this
 * object.
 */
final class QuorumLinks implements Closeable {

	private final int size;

	/** {@code [from][to]}, 1-based; row and column 0 are unused. */
	private final TcpProxy[][] quorum;

	/** {@code [from][to]}, 1-based; row and column 0 are unused. */
	private final TcpProxy[][] election;

	/** {@code [a][b]} and {@code [b][a]} alike; guarded by this. */
	private final boolean[][] cut;

	private QuorumLinks(int size) {
		this.size = size;
		this.quorum = new TcpProxy[size + 1][size + 1];
		this.election = new TcpProxy[size + 1][size + 1];
		this.cut = new boolean[size + 1][size + 1];
	}

	/**
	 * Start the proxies of every ordered pair.
	 * @param quorumPorts each server's real quorum port, by id (index 0 unused)
	 * @param electionPorts each server's real election port, by id (index 0 unused)
	 * @param leaderPatience how long a quorum proxy tries a leader that refuses the connection
	 * @return the links, none cut
	 * @throws IOException if a proxy cannot bind a port (those already started are closed)
	 */
	static QuorumLinks open(int[] quorumPorts, int[] electionPorts, Duration leaderPatience) throws IOException {
		QuorumLinks links = new QuorumLinks(quorumPorts.length - 1);
		try {
			for (int from = 1; from <= links.size; from++) {
				for (int to = 1; to <= links.size; to++) {
					if (from != to) {
						links.quorum[from][to] = TcpProxy.start(quorumPorts[to], leaderPatience);
						links.election[from][to] = TcpProxy.start(electionPorts[to]);
					}
				}
			}
		}
		catch (IOException ex) {
			links.close();
			throw ex;
		}
		return links;
	}

	/**
	 * The port that server {@code from} reaches {@code to}'s quorum port at.
	 * @param from the server whose configuration names the port
	 * @param to the server behind the proxy
	 * @return a proxy's port on 127.0.0.1
	 */
	int quorumPort(int from, int to) {
		return this.quorum[from][to].port();
	}

	/**
	 * The port that server {@code from} reaches {@code to}'s election port at.
	 * @param from the server whose configuration names the port
	 * @param to the server behind the proxy
	 * @return a proxy's port on 127.0.0.1
	 */
	int electionPort(int from, int to) {
		return this.election[from][to].port();
	}

	/**
	 * Freeze every proxy between two servers, in both directions: connections stay open, nothing
	 * crosses. Cutting a cut pair again changes nothing.
	 * @param a one server
	 * @param b another server
	 */
	synchronized void cut(int a, int b) {
		this.cut[a][b] = true;
		this.cut[b][a] = true;
		this.quorum[a][b].freeze();
		this.quorum[b][a].freeze();
		this.election[a][b].freeze();
		this.election[b][a].freeze();
	}

	/**
	 * Whether the link between two servers is cut.
	 * @param a one server
	 * @param b another server (or the same one: never cut)
	 * @return whether {@link #cut(int, int)} froze their proxies and no heal came since
	 */
	synchronized boolean isCut(int a, int b) {
		return this.cut[a][b];
	}

	/** Unfreeze every proxy; held bytes are delivered first. */
	synchronized void healAll() {
		for (int from = 1; from <= this.size; from++) {
			for (int to = 1; to <= this.size; to++) {
				if (from != to) {
					this.cut[from][to] = false;
					this.quorum[from][to].heal();
					this.election[from][to].heal();
				}
			}
		}
	}

	/** Close every proxy and the connections through it. */
	@Override
	public synchronized void close() {
		for (int from = 1; from <= this.size; from++) {
			for (int to = 1; to <= this.size; to++) {
				closeQuietly(this.quorum[from][to]);
				closeQuietly(this.election[from][to]);
			}
		}
	}

	private static void closeQuietly(@Nullable TcpProxy proxy) {
		if (proxy != null) {
			proxy.close();
		}
	}

}
