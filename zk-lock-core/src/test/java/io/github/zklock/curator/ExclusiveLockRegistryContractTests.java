package io.github.zklock.curator;

import java.time.Duration;

import org.apache.curator.utils.ZKPaths;

import io.github.zklock.LockMode;
import io.github.zklock.spi.LockTarget;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The registry contract for reentrant EXCLUSIVE locks, on Curator's {@code InterProcessMutex}:
 * a lock znode directly below the lock path.
 */
class ExclusiveLockRegistryContractTests extends AbstractLockRegistryContractTests {

	@Override
	protected LockTarget request(String key, Duration waitTime) {
		return new LockTarget(key, LockMode.EXCLUSIVE, true, 0, waitTime);
	}

	@Override
	protected void assertRecipeZnode(String lockPath, String node) {
		ZKPaths.PathAndNode parts = ZKPaths.getPathAndNode(node);
		assertThat(parts.getPath()).isEqualTo(lockPath);
		assertThat(parts.getNode()).contains("lock-").doesNotContain("__READ__", "__WRIT__");
	}

}
