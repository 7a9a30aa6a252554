package io.github.zklock.curator;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link KnownPaths}: which levels of a missing path are created, and the bound.
 */
class KnownPathsTests {

	@Test
	void nothingKnownCreatesEveryLevel() {
		KnownPaths known = new KnownPaths(10);
		assertThat(known.missingLevels("/locks/orders/42")).containsExactly("/locks", "/locks/orders",
				"/locks/orders/42");
	}

	@Test
	void levelsAboveACreatedChildAreKnownButNotThePathItself() {
		KnownPaths known = new KnownPaths(10);
		known.addLevelsAbove("/locks/orders/42");
		assertThat(known.size()).isEqualTo(2);
		assertThat(known.missingLevels("/locks/orders/43")).containsExactly("/locks/orders/43");
		assertThat(known.missingLevels("/locks/orders/42")).containsExactly("/locks/orders/42");
		assertThat(known.missingLevels("/locks/tenant/7/order/1")).containsExactly("/locks/tenant",
				"/locks/tenant/7", "/locks/tenant/7/order", "/locks/tenant/7/order/1");
	}

	@Test
	void aPathSaidMissingIsNoLongerKnown() {
		KnownPaths known = new KnownPaths(10);
		known.addLevelsAbove("/locks/orders/42");
		assertThat(known.missingLevels("/locks/orders")).containsExactly("/locks/orders");
		assertThat(known.missingLevels("/locks/orders/43")).containsExactly("/locks/orders", "/locks/orders/43");
	}

	@Test
	void forgettingAPathForgetsEveryLevelOfIt() {
		KnownPaths known = new KnownPaths(10);
		known.addLevelsAbove("/locks/tenant/7/order/1");
		known.forgetLevelsOf("/locks/tenant/7/order/2");
		assertThat(known.size()).isZero();
		assertThat(known.missingLevels("/locks/tenant/7/order/2")).hasSize(5);
	}

	@Test
	void theLeastRecentlyUsedPathsAreForgottenBeyondTheCapacity() {
		KnownPaths known = new KnownPaths(3);
		known.addLevelsAbove("/a/b/k");
		known.addLevelsAbove("/c/d/k");
		assertThat(known.size()).isEqualTo(3);
		// "/a" and "/a/b" were added first; "/a" was forgotten for "/c/d".
		assertThat(known.missingLevels("/c/d/k2")).containsExactly("/c/d/k2");
		assertThat(known.missingLevels("/a/x")).containsExactly("/a", "/a/x");
	}

	@Test
	void aPathCreatedEmptyHasItsChildrenMissingUntilOneIsCreated() {
		KnownPaths known = new KnownPaths(10);
		assertThat(known.takeEmptyGrandparent("/locks/semaphore/locks/lock-")).isFalse();
		known.addEmpty("/locks/semaphore");
		assertThat(known.takeEmptyGrandparent("/locks/other/locks/lock-")).isFalse();
		assertThat(known.takeEmptyGrandparent("/locks/semaphore/locks/lock-")).isTrue();
		assertThat(known.takeEmptyGrandparent("/locks/semaphore/locks/lock-")).isFalse();
		// Known to exist, so only its own child is missing.
		assertThat(known.missingLevels("/locks/semaphore/leases")).containsExactly("/locks/semaphore/leases");
	}

	@Test
	void anEmptyPathForgottenForTheCapacityIsNoLongerEmpty() {
		KnownPaths known = new KnownPaths(2);
		known.addEmpty("/a/s");
		known.addLevelsAbove("/b/c/k");
		assertThat(known.takeEmptyGrandparent("/a/s/locks/lock-")).isFalse();
		known.addEmpty("/d");
		known.forgetLevelsOf("/d");
		assertThat(known.takeEmptyGrandparent("/d/locks/lock-")).isFalse();
	}

}
