package io.github.zklock.curator;

import java.time.Duration;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.LockAccessDeniedException;
import io.github.zklock.LockException;
import io.github.zklock.LockMode;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link ZooKeeperFailures} where the registry tests do not reach: each group of
 * ZooKeeper error codes, a {@code KeeperException} wrapped in another exception, a failure while
 * the thread is interrupted, a closed client and any other exception. The failures of a stopped
 * server and of an interrupted waiter are covered for every lock kind by
 * {@link AbstractLockRegistryContractTests}. Translated with a real client, for its connect string
 * and state.
 */
class ZooKeeperFailuresTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final String LOCK_PATH = "/locks/orders/42";

	private static CuratorFramework client;

	@BeforeAll
	static void connect() throws Exception {
		client = zooKeeper.newClient();
	}

	@Test
	void unreachableServerCodesSayZooKeeperIsUnreachable() {
		for (Code code : new Code[] { Code.CONNECTIONLOSS, Code.OPERATIONTIMEOUT, Code.SESSIONEXPIRED,
				Code.SESSIONMOVED }) {
			KeeperException cause = KeeperException.create(code, LOCK_PATH);
			assertThat(translate(cause)).as("%s", code)
				.isExactlyInstanceOf(LockException.class)
				.hasMessage("Could not acquire EXCLUSIVE lock '" + LOCK_PATH + "': ZooKeeper is unreachable (connect string "
						+ zooKeeper.getConnectString() + ", " + code + ")")
				.hasCause(cause);
		}
	}

	@Test
	void authenticationCodesSayAccessWasDenied() {
		for (Code code : new Code[] { Code.NOAUTH, Code.AUTHFAILED, Code.SESSIONCLOSEDREQUIRESASLAUTH }) {
			assertThat(translate(KeeperException.create(code, LOCK_PATH))).as("%s", code)
				.isExactlyInstanceOf(LockAccessDeniedException.class)
				.hasMessageContaining("ZooKeeper denied access to " + LOCK_PATH + " (" + code + ")")
				.hasMessageContaining("no x509 or sasl identity")
				.hasMessageContaining("ACLs")
				.satisfies((ex) -> {
					assertThat(((LockAccessDeniedException) ex).getPath()).isEqualTo(LOCK_PATH);
					assertThat(((LockAccessDeniedException) ex).getSchemes()).isEmpty();
				});
		}
	}

	@Test
	void otherCodesAreNamed() {
		for (Code code : new Code[] { Code.NONODE, Code.BADVERSION, Code.NOTEMPTY }) {
			assertThat(translate(KeeperException.create(code, LOCK_PATH))).as("%s", code)
				.isExactlyInstanceOf(LockException.class)
				.hasMessage("Could not acquire EXCLUSIVE lock '" + LOCK_PATH + "': ZooKeeper returned " + code);
		}
	}

	@Test
	void findsAKeeperExceptionAmongTheCauses() {
		Exception wrapped = new IllegalStateException("wrapper",
				new RuntimeException(KeeperException.create(Code.CONNECTIONLOSS, LOCK_PATH)));
		assertThat(translate(wrapped)).hasMessageContaining("ZooKeeper is unreachable").hasCause(wrapped);
	}

	@Test
	void anyFailureOfAnInterruptedThreadIsAnInterruptionAndKeepsTheFlag() {
		try {
			Thread.currentThread().interrupt();
			assertThat(translate(KeeperException.create(Code.CONNECTIONLOSS, LOCK_PATH)))
				.hasMessageEndingWith("interrupted while waiting");
			assertThat(Thread.currentThread().isInterrupted()).isTrue();
		}
		finally {
			Thread.interrupted();
		}
	}

	@Test
	void otherExceptionsAreDescribed() {
		IllegalArgumentException odd = new IllegalArgumentException("odd");
		assertThat(ZooKeeperFailures.translate(odd, "read the fencing token of", LOCK_PATH, LockMode.WRITE, client))
			.isExactlyInstanceOf(LockException.class)
			.hasMessage("Could not read the fencing token of WRITE lock '" + LOCK_PATH + "': " + odd)
			.hasCause(odd);
	}

	@Test
	void waitEndedWithoutConnectionIsNotBusy() {
		assertThat(ZooKeeperFailures.notAnswered(LOCK_PATH, LockMode.READ, false, client))
			.isExactlyInstanceOf(LockException.class)
			.hasMessage("Could not acquire READ lock '" + LOCK_PATH + "': ZooKeeper is unreachable "
					+ "(connect string " + zooKeeper.getConnectString() + "): not connected when the wait ended");
	}

	@Test
	void waitEndedWithoutAnAnswerIsNotBusy() {
		assertThat(ZooKeeperFailures.notAnswered(LOCK_PATH, LockMode.WRITE, true, client))
			.isExactlyInstanceOf(LockException.class)
			.hasMessage("Could not acquire WRITE lock '" + LOCK_PATH + "': ZooKeeper is unreachable "
					+ "(connect string " + zooKeeper.getConnectString()
					+ "): connected, but no answer within the wait time showed whether the lock is held");
	}

	@Test
	void closedClientIsReportedAsSuch() throws Exception {
		CuratorFramework closed = zooKeeper.newClient();
		try (CuratorLockRegistry registry = new CuratorLockRegistry(closed, "/locks", 10)) {
			closed.close();
			assertThatExceptionOfType(LockException.class)
				.isThrownBy(() -> registry
					.tryAcquire(new LockTarget("/closed", LockMode.EXCLUSIVE, true, 0, Duration.ofSeconds(1))))
				.withMessage("Could not acquire EXCLUSIVE lock '/locks/closed': the Curator client is STOPPED")
				.withCauseInstanceOf(IllegalStateException.class);
		}
	}

	private static LockException translate(Exception ex) {
		return ZooKeeperFailures.translate(ex, "acquire", LOCK_PATH, LockMode.EXCLUSIVE, client);
	}

}
