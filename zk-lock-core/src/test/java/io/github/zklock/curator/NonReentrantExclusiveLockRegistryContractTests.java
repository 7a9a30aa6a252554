package io.github.zklock.curator;

import java.time.Duration;

import org.apache.curator.utils.ZKPaths;

import io.github.zklock.LockMode;
import io.github.zklock.spi.LockTarget;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The registry contract for non-reentrant EXCLUSIVE locks, on a one-lease
 * {@code InterProcessSemaphoreV2} (the recipe behind {@code InterProcessSemaphoreMutex}): a lease
 * znode below {@code leases}. An attempt goes through the semaphore's internal mutex, so it creates
 * two znodes, the mutex's and the lease's.
 */
class NonReentrantExclusiveLockRegistryContractTests extends AbstractLockRegistryContractTests {

	@Override
	protected LockTarget request(String key, Duration waitTime) {
		return new LockTarget(key, LockMode.EXCLUSIVE, false, 0, waitTime);
	}

	@Override
	protected int znodesPerAttempt() {
		return 2;
	}

	@Override
	protected void assertRecipeZnode(String lockPath, String node) {
		ZKPaths.PathAndNode parts = ZKPaths.getPathAndNode(node);
		assertThat(parts.getPath()).isEqualTo(ZKPaths.makePath(lockPath, Protocol.LEASES));
		assertThat(parts.getNode()).contains("lease-");
	}

}
