package io.github.zklock.benchmarks;

import java.io.IOException;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The ZooKeeper server of one benchmark fork (in-process unless an external one is configured, see
 * {@link ZooKeeperServers}) and a Curator client connected to it, shared by the raw Curator recipes
 * and the peers. Every znode of the fork lives below {@link #path(String) one top znode}.
 */
@State(Scope.Benchmark)
public class ZooKeeperState {

	private @Nullable TestingServer server;

	private String connectString = "";

	private String base = "";

	private @Nullable CuratorFramework client;

	/**
	 * Start the server (unless external) and the client.
	 * @throws Exception if either does not start
	 */
	@Setup(Level.Trial)
	public void start() throws Exception {
		String external = ZooKeeperServers.externalConnectString();
		if (external != null) {
			this.connectString = external;
		}
		else {
			this.server = ZooKeeperServers.startInProcess();
			this.connectString = this.server.getConnectString();
		}
		this.base = "/" + ZooKeeperServers.runId();
		this.client = ZooKeeperServers.startClient(this.connectString);
	}

	/**
	 * Close the client, then the in-process server.
	 * @throws IOException if the server fails to stop
	 */
	@TearDown(Level.Trial)
	public void stop() throws IOException {
		if (this.client != null) {
			this.client.close();
		}
		if (this.server != null) {
			this.server.close();
		}
	}

	/**
	 * Return the connect string of the server.
	 * @return the connect string
	 */
	public String connectString() {
		return this.connectString;
	}

	/**
	 * Return the shared Curator client.
	 * @return the started client
	 */
	public CuratorFramework client() {
		if (this.client == null) {
			throw new IllegalStateException("Not started");
		}
		return this.client;
	}

	/**
	 * Return a znode path below this fork's top znode.
	 * @param relative a path starting with {@code /}
	 * @return the full path
	 */
	public String path(String relative) {
		return this.base + relative;
	}

	/**
	 * Return this fork's unique name, for keys of libraries that choose their own root znode.
	 * @return the name of the top znode, without the slash
	 */
	public String runId() {
		return this.base.substring(1);
	}

}
