package io.github.zklock.engine;

import org.jspecify.annotations.Nullable;

import io.github.zklock.spi.RegistryGrant;

/**
 * One key's grant as the template holds it: the registry's grant, and the observation of its hold
 * when the template observes, started as the key was granted (a multi-lock's keys one by one, so
 * that a key released again because a later one stayed busy was observed too).
 *
 * @param key the registry's grant
 * @param hold the observation of its hold, {@code null} when nothing is observed
 */
record Held(RegistryGrant key, LockObservations.@Nullable Hold hold) {

	/** Stop the hold's observation with the key's outcome, then release the key (its delete answered). */
	void release() {
		stopObservation();
		this.key.release();
	}

	/** Stop the hold's observation, then release the key without waiting for ZooKeeper. */
	java.util.concurrent.CompletableFuture<Void> releaseAsync() {
		stopObservation();
		return this.key.releaseAsync();
	}

	private void stopObservation() {
		LockObservations.Hold observed = this.hold;
		if (observed != null) {
			observed.stop(this.key);
		}
	}

}
