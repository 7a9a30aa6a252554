package io.github.zklock.docs.hotkeys;

import java.time.Duration;

import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.curator.LocalHandoff;

/**
 * The guide's local hand-off settings on a registry of one's own.
 */
public final class HandoffSettings {

	private HandoffSettings() {
	}

	/**
	 * Let the chains of a registry run longer while another participant waits.
	 * @param registry the registry
	 */
	public static void longerChains(CuratorLockRegistry registry) {
		// tag::handoff[]
		registry.setLocalHandoff(new LocalHandoff(true, 64, Duration.ofMillis(100))); // 64 grants or 100 ms
		// end::handoff[]
	}

	/**
	 * Give every grant a znode of its own.
	 * @param registry the registry
	 */
	public static void off(CuratorLockRegistry registry) {
		// tag::off[]
		registry.setLocalHandoff(LocalHandoff.DISABLED);
		// end::off[]
	}

}
