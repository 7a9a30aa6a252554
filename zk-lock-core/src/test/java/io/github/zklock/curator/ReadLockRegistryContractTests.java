package io.github.zklock.curator;

import java.time.Duration;

import org.apache.curator.utils.ZKPaths;

import io.github.zklock.LockMode;
import io.github.zklock.spi.LockTarget;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The registry contract for READ locks, the read side of Curator's
 * {@code InterProcessReadWriteLock}: a {@code __READ__} znode directly below the lock path. Readers
 * share, so the request a READ grant excludes, and is excluded by, is a WRITE of the same key.
 */
class ReadLockRegistryContractTests extends AbstractLockRegistryContractTests {

	@Override
	protected LockTarget request(String key, Duration waitTime) {
		return new LockTarget(key, LockMode.READ, true, 0, waitTime);
	}

	@Override
	protected LockTarget excludingRequest(String key, Duration waitTime) {
		return new LockTarget(key, LockMode.WRITE, true, 0, waitTime);
	}

	@Override
	protected void assertRecipeZnode(String lockPath, String node) {
		ZKPaths.PathAndNode parts = ZKPaths.getPathAndNode(node);
		assertThat(parts.getPath()).isEqualTo(lockPath);
		assertThat(parts.getNode()).contains("__READ__");
	}

}
