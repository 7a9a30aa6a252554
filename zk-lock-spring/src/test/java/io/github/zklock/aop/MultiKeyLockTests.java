package io.github.zklock.aop;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockContext;
import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockState;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * {@code @DistributedLock} with several keys (a multi-lock), through the advisor of
 * {@code @EnableDistributedLocks} in plain Spring contexts on a real ZooKeeper: transfers naming
 * two accounts in opposite orders neither deadlock nor overlap, between two threads and between
 * two applications; a key busy elsewhere fails the call at once and leaves the other key free;
 * the same key twice is one lock; a {@code null} value in any key acquires nothing; the method
 * sees the handle of the set, one part per key in canonical order; a multi-lock inside a call
 * holding one of its keys re-enters it; each key is observed under its own template.
 */
class MultiKeyLockTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final int TRANSFERS = 200;

	private final Ledger ledger = new Ledger();

	private CuratorLockRegistry otherProcess;

	@BeforeEach
	void connectOtherProcess() throws InterruptedException {
		// Another application: its own client (closed by the extension after the test).
		this.otherProcess = new CuratorLockRegistry(zooKeeper.newClient(), "/locks", 10);
	}

	@AfterEach
	void closeOtherProcess() {
		this.otherProcess.close();
	}

	@Test
	void oppositeOrdersFromTwoThreadsNeitherDeadlockNorOverlap() throws Exception {
		try (AnnotationConfigApplicationContext application = start()) {
			Accounts accounts = application.getBean(Accounts.class);
			LockApplications.runConcurrently(Duration.ofSeconds(90), () -> transfers(accounts, "a", "b"),
					() -> transfers(accounts, "b", "a"));
			assertThat(new CuratorLockAdmin(application.getBean(CuratorLockRegistry.class)).heldLockCount()).isZero();
		}
		assertNoOverlap("a", "b");
	}

	@Test
	void oppositeOrdersFromTwoApplicationsNeitherDeadlockNorOverlap() throws Exception {
		try (AnnotationConfigApplicationContext first = start(); AnnotationConfigApplicationContext second = start()) {
			Accounts firstAccounts = first.getBean(Accounts.class);
			Accounts secondAccounts = second.getBean(Accounts.class);
			LockApplications.runConcurrently(Duration.ofSeconds(90), () -> transfers(firstAccounts, "c", "d"),
					() -> transfers(secondAccounts, "d", "c"));
		}
		assertNoOverlap("c", "d");
	}

	@Test
	void keyBusyElsewhereFailsTheCallAndTheKeyTakenBeforeItIsFreeAtOnce() throws Exception {
		try (AnnotationConfigApplicationContext application = start()) {
			Accounts accounts = application.getBean(Accounts.class);
			// busy-a sorts first: it is granted, then busy-b is not, so busy-a must be given back.
			LockHandle held = otherProcessTakes("/account/busy-b");
			try {
				assertThatExceptionOfType(LockAcquisitionException.class)
					.isThrownBy(() -> accounts.transferNow("busy-a", "busy-b"))
					.withMessageContaining("/locks/account/busy-b");
				assertThat(this.ledger.transfers()).isZero();
				assertThat(new CuratorLockAdmin(application.getBean(CuratorLockRegistry.class)).heldLockCount()).isZero();
				otherProcessTakes("/account/busy-a").release();
			}
			finally {
				held.release();
			}
			accounts.transferNow("busy-b", "busy-a");
			assertThat(this.ledger.transfers()).isOne();
		}
	}

	@Test
	void sameKeyTwiceIsOneLock() throws Exception {
		try (AnnotationConfigApplicationContext application = start()) {
			Accounts accounts = application.getBean(Accounts.class);
			accounts.transferNow("same", "same");
			assertThat(this.ledger.transfers()).isOne();
			LockHandle handle = accounts.handle("same", "same");
			assertThat(handle.path()).isEqualTo("/locks/account/same");
			assertThat(handle.parts()).containsExactly(handle);
			assertThat(handle.isHeld()).isFalse();
		}
	}

	@Test
	void nullValueInTheSecondKeyFailsTheCallBeforeAnyRequest() throws Exception {
		try (AnnotationConfigApplicationContext application = start()) {
			Accounts accounts = application.getBean(Accounts.class);
			assertThatExceptionOfType(InvalidLockPathException.class)
				.isThrownBy(() -> accounts.transferNow("untouched", null))
				.withMessageContaining("/account/#{#to}")
				.withMessageContaining("null");
			assertThat(this.ledger.transfers()).isZero();
			// The first key was never asked for: its lock znode was never created.
			CuratorFramework client = application.getBean(CuratorFramework.class);
			assertThat(client.checkExists().forPath("/locks/account/untouched")).isNull();
			assertThat(new CuratorLockAdmin(application.getBean(CuratorLockRegistry.class)).heldLockCount()).isZero();
		}
	}

	@Test
	void methodSeesTheHandleOfTheSetWithOnePartPerKeyInCanonicalOrder() throws Exception {
		try (AnnotationConfigApplicationContext application = start()) {
			Accounts accounts = application.getBean(Accounts.class);
			assertThat(LockContext.current()).isEmpty();
			LockHandle handle = accounts.handle("ctx-b", "ctx-a");
			assertThat(handle.parts()).hasSize(2)
				.extracting(LockHandle::path)
				.containsExactly("/locks/account/ctx-a", "/locks/account/ctx-b");
			// The set answers path() for its first part in canonical order.
			assertThat(handle.path()).isEqualTo("/locks/account/ctx-a");
			assertThat(handle.mode()).isEqualTo(LockMode.EXCLUSIVE);
			// Inside the method: all held, each part with its own token.
			assertThat(this.ledger.seenHeld).containsExactly(true);
			assertThat(this.ledger.seenTokens).hasSize(2).allSatisfy((token) -> assertThat(token).isPositive());
			// Released with the call, every part: no token any more.
			assertThatIllegalStateException().isThrownBy(handle::fencingToken).withMessageContaining("released");
			assertThat(handle.state()).isEqualTo(LockState.RELEASED);
			assertThat(handle.parts()).noneMatch(LockHandle::isHeld);
			assertThat(LockContext.current()).isEmpty();
		}
	}

	@Test
	void multiLockInsideACallHoldingOneOfItsKeysReentersThatKey() throws Exception {
		try (AnnotationConfigApplicationContext application = start()) {
			Teller teller = application.getBean(Teller.class);
			// waitTime 0 throughout: a second grant of the held key would fail at once.
			teller.closeAccount("nested-a", "nested-b");
			assertThat(this.ledger.transfers()).isOne();
			assertThat(new CuratorLockAdmin(application.getBean(CuratorLockRegistry.class)).heldLockCount()).isZero();
			otherProcessTakes("/account/nested-a").release();
		}
	}

	@Test
	void eachKeyIsObservedUnderTheMethodsKeyTemplates() throws Exception {
		try (AnnotationConfigApplicationContext application = start()) {
			AcquireObservations observations = AcquireObservations.observe(application);
			application.getBean(Accounts.class).transferNow("obs-b", "obs-a");
			// One request, one low-cardinality name for both keys: the templates, never the values.
			assertThat(observations.recorded()).containsExactly("/account/#{#from},/account/#{#to} acquired",
					"/account/#{#from},/account/#{#to} acquired");
		}
	}

	private AnnotationConfigApplicationContext start() throws InterruptedException {
		return LockApplications.start(zooKeeper, (context) -> context.registerBean(Ledger.class, () -> this.ledger),
				Accounts.class, Teller.class);
	}

	private static Void transfers(Accounts accounts, String from, String to) {
		for (int i = 0; i < TRANSFERS; i++) {
			accounts.transfer(from, to);
		}
		return null;
	}

	private void assertNoOverlap(String first, String second) {
		assertThat(this.ledger.transfers()).isEqualTo(2 * TRANSFERS);
		assertThat(this.ledger.maxInside()).isOne();
		// As many transfers each way: an overlapping read-modify-write would have lost one.
		assertThat(this.ledger.balance(first)).isZero();
		assertThat(this.ledger.balance(second)).isZero();
	}

	/** Take a lock in the other application at once, failing the test if it is busy. */
	private LockHandle otherProcessTakes(String key) {
		return this.otherProcess.tryAcquire(new LockTarget(key, LockMode.EXCLUSIVE, true, 0, Duration.ZERO))
			.orElseThrow();
	}

	/** Balances shared by the applications of a test, as a database would be. */
	static final class Ledger {

		private final Map<String, Integer> balances = new ConcurrentHashMap<>();

		private final AtomicInteger inside = new AtomicInteger();

		private final AtomicInteger maxInside = new AtomicInteger();

		private final AtomicInteger transfers = new AtomicInteger();

		final List<Boolean> seenHeld = new CopyOnWriteArrayList<>();

		final List<Long> seenTokens = new CopyOnWriteArrayList<>();

		void transfer(String from, String to) {
			this.maxInside.accumulateAndGet(this.inside.incrementAndGet(), Math::max);
			int fromBalance = balance(from);
			Thread.yield();
			this.balances.put(from, fromBalance - 1);
			int toBalance = balance(to);
			Thread.yield();
			this.balances.put(to, toBalance + 1);
			this.transfers.incrementAndGet();
			this.inside.decrementAndGet();
		}

		int balance(String account) {
			return this.balances.getOrDefault(account, 0);
		}

		int transfers() {
			return this.transfers.get();
		}

		int maxInside() {
			return this.maxInside.get();
		}

	}

	static class Accounts {

		private final Ledger ledger;

		Accounts(Ledger ledger) {
			this.ledger = ledger;
		}

		@DistributedLock(path = { "/account/#{#from}", "/account/#{#to}" }, waitTime = "20s")
		public void transfer(String from, String to) {
			this.ledger.transfer(from, to);
		}

		@DistributedLock(path = { "/account/#{#from}", "/account/#{#to}" }, waitTime = "0")
		public void transferNow(String from, @Nullable String to) {
			this.ledger.transfer(from, to);
		}

		@DistributedLock(path = { "/account/#{#from}", "/account/#{#to}" }, waitTime = "0")
		public LockHandle handle(String from, String to) {
			LockHandle handle = LockContext.require();
			this.ledger.seenHeld.add(handle.isHeld());
			if (handle.parts().size() > 1) {
				handle.parts().forEach((part) -> this.ledger.seenTokens.add(part.fencingToken()));
			}
			return handle;
		}

	}

	static class Teller {

		private final Accounts accounts;

		Teller(Accounts accounts) {
			this.accounts = accounts;
		}

		@DistributedLock(path = "/account/#{#account}", waitTime = "0")
		public void closeAccount(String account, String into) {
			this.accounts.transferNow(account, into);
		}

	}

}
