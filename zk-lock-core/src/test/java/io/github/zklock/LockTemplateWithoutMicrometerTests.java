package io.github.zklock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.spi.RegistryGrant;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Admins.admin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link LockTemplate} works without Micrometer, an optional dependency of the core: a real
 * execute, acquire and tryAcquire cycle on a real ZooKeeper server. The build runs this class twice:
 * with the test class path as it is, and (surefire execution {@code without-micrometer}) with
 * Micrometer removed and the system property {@value #ABSENT} set, where it also checks that
 * Micrometer really is absent. It must not name a Micrometer type, or it could not load then.
 */
class LockTemplateWithoutMicrometerTests {

	/** Set by the build when it removed Micrometer from the class path. */
	static final String ABSENT = "zklock.micrometer.absent";

	private static final String OBSERVATION_REGISTRY = "io.micrometer.observation.ObservationRegistry";

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private CuratorLockRegistry registry;

	private CuratorLockRegistry otherProcess;

	private LockTemplate template;

	@BeforeEach
	void connect() throws Exception {
		this.registry = new CuratorLockRegistry(zooKeeper.newClient(), "/locks", 10);
		this.otherProcess = new CuratorLockRegistry(zooKeeper.newClient(), "/locks", 10);
		this.template = new LockTemplate(this.registry, Duration.ofSeconds(5));
	}

	@AfterEach
	void close() {
		// The extension closes the clients after this.
		this.registry.close();
		this.otherProcess.close();
	}

	@Test
	void micrometerIsOnTheClassPathExactlyWhenTheBuildLeftItThere() {
		boolean absent = Boolean.getBoolean(ABSENT);
		assertThat(loadable(OBSERVATION_REGISTRY)).as("%s loadable with %s=%s", OBSERVATION_REGISTRY, ABSENT, absent)
			.isEqualTo(!absent);
	}

	@Test
	void executeAcquireAndTryAcquireWork() {
		AtomicReference<LockHandle> inCallback = new AtomicReference<>();
		String result = this.template.execute("/no-micrometer/execute", (handle) -> {
			inCallback.set(handle);
			assertThat(LockContext.require()).isSameAs(handle);
			assertThat(handle.fencingToken()).isPositive();
			assertThat(otherProcessGets("/no-micrometer/execute")).isEmpty();
			return "done";
		});
		assertThat(result).isEqualTo("done");
		assertThat(inCallback.get().state()).isEqualTo(LockState.RELEASED);
		assertThat(LockContext.current()).isEmpty();

		LockHandle acquired = this.template.acquire("/no-micrometer/acquire", LockMode.WRITE, Duration.ZERO);
		assertThat(acquired.isHeld()).isTrue();
		assertThat(acquired.path()).isEqualTo("/locks/no-micrometer/acquire");
		assertThatExceptionOfType(LockAcquisitionException.class)
			.isThrownBy(() -> new LockTemplate(this.otherProcess, Duration.ZERO).acquire("/no-micrometer/acquire",
					LockMode.WRITE, null));
		acquired.release();
		assertThat(acquired.state()).isEqualTo(LockState.RELEASED);

		LockHandle tried = this.template.tryAcquire("/no-micrometer/try", LockMode.EXCLUSIVE, null).orElseThrow();
		assertThat(otherProcessGets("/no-micrometer/try")).isEmpty();
		tried.release();
		Optional<RegistryGrant> next = otherProcessGets("/no-micrometer/try");
		assertThat(next).isPresent();
		assertThat(this.template.tryAcquire("/no-micrometer/try", LockMode.EXCLUSIVE, Duration.ZERO)).isEmpty();
		next.get().release();
		assertThat(admin(this.registry).heldLockCount()).isZero();
	}

	private Optional<RegistryGrant> otherProcessGets(String key) {
		return this.otherProcess.tryAcquire(new LockTarget(key, LockMode.EXCLUSIVE, true, 0, Duration.ZERO));
	}

	private static boolean loadable(String className) {
		try {
			Class.forName(className, false, LockTemplateWithoutMicrometerTests.class.getClassLoader());
			return true;
		}
		catch (ClassNotFoundException | LinkageError ex) {
			return false;
		}
	}

}
