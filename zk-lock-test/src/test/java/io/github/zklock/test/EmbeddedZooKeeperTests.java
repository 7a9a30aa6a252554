package io.github.zklock.test;

import java.io.File;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link EmbeddedZooKeeper}: it serves clients, and keeps its data and the
 * configuration file ZooKeeper writes in a directory of its own, deleted when it stops.
 */
class EmbeddedZooKeeperTests {

	@Test
	void servesClientsAndDeletesItsDirectoryWhenClosed() throws Exception {
		File directory;
		try (EmbeddedZooKeeper zooKeeper = new EmbeddedZooKeeper(0)) {
			directory = zooKeeper.directory().root();
			try (CuratorFramework client = CuratorFrameworkFactory.newClient(zooKeeper.getConnectString(),
					new RetryOneTime(100))) {
				client.start();
				client.create().forPath("/embedded", new byte[] { 1 });
				assertThat(client.getData().forPath("/embedded")).containsExactly(1);
			}
			assertThat(directory.list()).contains("data")
				.anyMatch((name) -> name.startsWith("zookeeper.configuration"));
		}
		assertThat(directory).doesNotExist();
	}

}
