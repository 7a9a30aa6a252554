package io.github.zklock.curator;

import org.apache.zookeeper.ZooDefs;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link LockAclProvider}: which paths get the creator-only ACL. The ACLs on a real
 * server are tested with the auto-configuration ({@code ZkLockAuthTests}).
 */
class LockAclProviderTests {

	@Test
	void protectsTheRootPathAndBelowOnly() {
		LockAclProvider provider = new LockAclProvider("/locks");
		assertThat(provider.getAclForPath("/locks")).isEqualTo(ZooDefs.Ids.CREATOR_ALL_ACL);
		assertThat(provider.getAclForPath("/locks/orders")).isEqualTo(ZooDefs.Ids.CREATOR_ALL_ACL);
		assertThat(provider.getAclForPath("/locks/orders/_c_1-lock-0000000001")).isEqualTo(ZooDefs.Ids.CREATOR_ALL_ACL);
		assertThat(provider.getAclForPath("/")).isEqualTo(ZooDefs.Ids.OPEN_ACL_UNSAFE);
		assertThat(provider.getAclForPath("/locksmith")).as("a sibling sharing the prefix")
			.isEqualTo(ZooDefs.Ids.OPEN_ACL_UNSAFE);
		assertThat(provider.getAclForPath("/other/locks")).isEqualTo(ZooDefs.Ids.OPEN_ACL_UNSAFE);
		assertThat(provider.getDefaultAcl()).isEqualTo(ZooDefs.Ids.OPEN_ACL_UNSAFE);
	}

	@Test
	void leavesTheParentsOfANestedRootPathOpen() {
		LockAclProvider provider = new LockAclProvider("/apps/billing/locks");
		assertThat(provider.isProtected("/apps")).isFalse();
		assertThat(provider.isProtected("/apps/billing")).isFalse();
		assertThat(provider.isProtected("/apps/billing/locks")).isTrue();
		assertThat(provider.isProtected("/apps/billing/locks/x")).isTrue();
	}

	@Test
	void matchesPathsWithTheNamespace() {
		LockAclProvider provider = new LockAclProvider("tenant-a", "/locks");
		assertThat(provider.isProtected("/tenant-a")).isFalse();
		assertThat(provider.isProtected("/tenant-a/locks")).isTrue();
		assertThat(provider.isProtected("/tenant-a/locks/x")).isTrue();
		assertThat(provider.isProtected("/locks/x")).isFalse();
		assertThat(new LockAclProvider("", "/locks").isProtected("/locks/x")).isTrue();
		assertThat(provider).hasToString("LockAclProvider[creator-only at and below /tenant-a/locks]");
	}

	@Test
	void protectsEverythingUnderTheZooKeeperRoot() {
		LockAclProvider provider = new LockAclProvider("/");
		assertThat(provider.isProtected("/x")).isTrue();
		assertThat(provider.isProtected("/x/y")).isTrue();
	}

	@Test
	void rejectsAnIllegalRootPath() {
		assertThatIllegalArgumentException().isThrownBy(() -> new LockAclProvider("locks"));
		assertThatIllegalArgumentException().isThrownBy(() -> new LockAclProvider("/locks/"));
	}

}
