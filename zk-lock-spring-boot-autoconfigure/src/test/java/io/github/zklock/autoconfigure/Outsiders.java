package io.github.zklock.autoconfigure;

import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.zookeeper.KeeperException;

import io.github.zklock.LockHandle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What a client without the lock's identity must not be able to do to a held lock, through raw
 * Curator: list its queue, delete the holder's znode, create a znode in the queue, change the
 * holder's data, or be granted the lock by Curator's own recipe.
 */
final class Outsiders {

	private Outsiders() {
	}

	/**
	 * Return the znode of a grant, the only one in its lock's queue.
	 * @param client the holder's client
	 * @param handle the grant
	 * @return its full path
	 * @throws Exception if ZooKeeper refuses the listing
	 */
	static String holderZnode(CuratorFramework client, LockHandle handle) throws Exception {
		List<String> queue = client.getChildren().forPath(handle.path());
		assertThat(queue).as("the queue of %s", handle.path()).hasSize(1);
		return handle.path() + "/" + queue.get(0);
	}

	/**
	 * Assert that a client is locked out of a held lock.
	 * @param outsider a started client with another identity, or none
	 * @param lockPath the lock's path (the parent of its znodes)
	 * @param holderZnode the full path of the holder's znode
	 */
	static void assertLockedOut(CuratorFramework outsider, String lockPath, String holderZnode) {
		assertThatExceptionOfType(KeeperException.NoAuthException.class).as("list the queue")
			.isThrownBy(() -> outsider.getChildren().forPath(lockPath));
		assertThatExceptionOfType(KeeperException.NoAuthException.class).as("delete the holder's znode")
			.isThrownBy(() -> outsider.delete().forPath(holderZnode));
		assertThatExceptionOfType(KeeperException.NoAuthException.class).as("change the holder's data")
			.isThrownBy(() -> outsider.setData().forPath(holderZnode, new byte[] { 1 }));
		assertThatExceptionOfType(KeeperException.NoAuthException.class).as("create a znode in the queue")
			.isThrownBy(() -> outsider.create().forPath(lockPath + "/_c_jumping-the-queue-lock-0000000000"));
		InterProcessMutex mutex = new InterProcessMutex(outsider, lockPath);
		assertThatThrownBy(() -> assertThat(mutex.acquire(1, TimeUnit.SECONDS)).as("granted").isFalse())
			.as("be granted through InterProcessMutex")
			.satisfiesAnyOf((ex) -> assertThat(ex).isInstanceOf(KeeperException.NoAuthException.class),
					(ex) -> assertThat(ex).hasRootCauseInstanceOf(KeeperException.NoAuthException.class));
	}

}
