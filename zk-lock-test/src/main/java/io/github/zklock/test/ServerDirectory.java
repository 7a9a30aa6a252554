package io.github.zklock.test;

import java.io.Closeable;
import java.io.File;
import java.io.IOException;

import org.apache.curator.test.DirectoryUtils;

/**
 * The temporary directory of one in-process server, deleted as a whole when the server is done
 * with it. ZooKeeper's embedded server, which curator-test's {@code TestingServer} starts, writes
 * a {@code zookeeper.configuration*.properties} file next to the data directory, into its parent,
 * and never deletes it: with curator-test's default data directory that parent is
 * {@code java.io.tmpdir} itself, which gained a file per server start. Here the data directory is
 * a child of a directory of the server's own.
 */
final class ServerDirectory implements Closeable {

	private final File root = DirectoryUtils.createTempDirectory();

	/**
	 * The data directory to give the server's {@code InstanceSpec}; created by the server.
	 * @return a child of this directory
	 */
	File dataDirectory() {
		return new File(this.root, "data");
	}

	/**
	 * This directory, for tests.
	 * @return the directory that holds the data directory and the configuration files
	 */
	File root() {
		return this.root;
	}

	/**
	 * Delete the directory and all it holds; call it once the server is closed.
	 * @throws IOException if a file cannot be deleted
	 */
	@Override
	public void close() throws IOException {
		DirectoryUtils.deleteRecursively(this.root);
	}

}
