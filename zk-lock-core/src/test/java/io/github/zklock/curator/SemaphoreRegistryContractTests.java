package io.github.zklock.curator;

import java.time.Duration;

import org.apache.curator.utils.ZKPaths;

import io.github.zklock.LockMode;
import io.github.zklock.spi.LockTarget;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The registry contract for a permit of a semaphore of one permit
 * (a {@link LockTarget} of one permit), on Curator's {@code InterProcessSemaphoreV2}
 * as for the non-reentrant EXCLUSIVE lock: a lease znode below {@code leases}, an attempt creating
 * two znodes (the semaphore's internal mutex's and the lease's). Every scenario of the contract
 * applies. The one that counts requests lets the measured registry use the key once beforehand: a
 * registry's first request for a semaphore also checks the number of permits stored with the key
 * (see {@code SemaphorePermits}; its cost is measured in {@link SemaphoreRequestCountTests}).
 */
class SemaphoreRegistryContractTests extends AbstractLockRegistryContractTests {

	@Override
	protected LockTarget request(String key, Duration waitTime) {
		return new LockTarget(key, LockMode.EXCLUSIVE, false, 1, waitTime);
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

	@Override
	protected void beforeCountedAttempt(CuratorLockRegistry registry, String key) {
		registry.tryAcquire(request(key, Duration.ZERO))
			.orElseThrow(() -> new AssertionError("free key not granted: " + key))
			.release();
	}

}
