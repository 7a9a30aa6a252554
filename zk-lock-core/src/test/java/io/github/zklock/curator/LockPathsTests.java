package io.github.zklock.curator;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.github.zklock.InvalidLockPathException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link LockPaths} where the registry tests do not reach: root path validation, joining
 * a key to the root path, the length limit and the surrogate ZooKeeper's own check lets through.
 * The common illegal keys are refused by every lock kind in {@link AbstractLockRegistryContractTests}.
 */
class LockPathsTests {

	@Test
	void acceptsLegalRootPaths() {
		for (String root : List.of("/", "/locks", "/apps/billing/locks")) {
			assertThat(LockPaths.validRootPath(root)).isEqualTo(root);
		}
	}

	@Test
	void rejectsIllegalRootPathsNamingThem() {
		for (String root : List.of("locks", "/locks/", "/a//b", "", "/a/../b")) {
			assertThatExceptionOfType(InvalidLockPathException.class).as(root)
				.isThrownBy(() -> LockPaths.validRootPath(root))
				.withMessageStartingWith("Invalid lock root path '" + root + "'")
				.withCauseInstanceOf(IllegalArgumentException.class);
		}
		assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(() -> LockPaths.validRootPath(null));
	}

	@Test
	void joinsTheKeyToTheRootPath() {
		assertThat(LockPaths.lockPath("/locks", "/stock/apple")).isEqualTo("/locks/stock/apple");
		assertThat(LockPaths.lockPath("/apps/billing/locks", "/a")).isEqualTo("/apps/billing/locks/a");
		assertThat(LockPaths.lockPath("/", "/stock")).isEqualTo("/stock");
	}

	@Test
	void rejectsAKeyNamingNoZnodeBelowTheRoot() {
		for (String key : new String[] { null, "", "/" }) {
			assertThatExceptionOfType(InvalidLockPathException.class).as("%s", key)
				.isThrownBy(() -> LockPaths.lockPath("/locks", key))
				.withMessageContaining("must name a znode below the root path");
		}
	}

	@Test
	void rejectsALockPathLongerThanTheLimitCountingTheRootPath() {
		String root = "/locks";
		String longest = "/" + "k".repeat(CuratorLockRegistry.MAX_PATH_LENGTH - root.length() - 1);
		assertThat(LockPaths.lockPath(root, longest)).hasSize(CuratorLockRegistry.MAX_PATH_LENGTH);

		String tooLong = longest + "k";
		assertThatExceptionOfType(InvalidLockPathException.class).isThrownBy(() -> LockPaths.lockPath(root, tooLong))
			.withMessageContaining(tooLong.length() + " characters starting with '" + tooLong.substring(0, 40) + "...'")
			.withMessageContaining(String.valueOf(CuratorLockRegistry.MAX_PATH_LENGTH));
		// Under a shorter root the same key fits.
		assertThat(LockPaths.lockPath("/l", tooLong)).hasSize(tooLong.length() + 2);
	}

	@Test
	void rejectsTheSurrogateZooKeeperLetsThrough() {
		// U+D800 passes ZooKeeper's path check, but would reach the server as '?' and name another znode.
		assertThatExceptionOfType(InvalidLockPathException.class)
			.isThrownBy(() -> LockPaths.lockPath("/locks", "/a\uD800b"))
			.withMessage("Invalid lock path: surrogate character at index 2");
		// The other surrogates, paired or not, ZooKeeper's own check refuses.
		for (String key : List.of("/a\uDBFFb", "/a\uDC00", "/\uD83D\uDE00")) {
			assertThatExceptionOfType(InvalidLockPathException.class).as(key)
				.isThrownBy(() -> LockPaths.lockPath("/locks", key));
		}
	}

}
