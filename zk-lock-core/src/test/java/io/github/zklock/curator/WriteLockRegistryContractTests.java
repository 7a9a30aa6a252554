package io.github.zklock.curator;

import java.time.Duration;

import org.apache.curator.utils.ZKPaths;

import io.github.zklock.LockMode;
import io.github.zklock.spi.LockTarget;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The registry contract for WRITE locks, the write side of Curator's
 * {@code InterProcessReadWriteLock}: a {@code __WRIT__} znode directly below the lock path. A
 * WRITE grant excludes the WRITE of another process.
 */
class WriteLockRegistryContractTests extends AbstractLockRegistryContractTests {

	@Override
	protected LockTarget request(String key, Duration waitTime) {
		return new LockTarget(key, LockMode.WRITE, true, 0, waitTime);
	}

	@Override
	protected void assertRecipeZnode(String lockPath, String node) {
		ZKPaths.PathAndNode parts = ZKPaths.getPathAndNode(node);
		assertThat(parts.getPath()).isEqualTo(lockPath);
		assertThat(parts.getNode()).contains("__WRIT__");
	}

}
