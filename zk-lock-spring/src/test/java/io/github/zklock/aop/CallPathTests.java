package io.github.zklock.aop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.zklock.LockMode;
import io.github.zklock.LockState;
import io.github.zklock.LockTemplate;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.annotation.EnableDistributedLocks;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.spi.LockRegistry;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.spi.RegistryGrant;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The path of one annotated call, on a real ZooKeeper: the advice makes one call into
 * {@link LockTemplate}, which asks the backend once for the grant and releases it once. Measured
 * with a registry that records, when it is asked, the zk-lock frames on the stack (a proxy whose
 * interceptor branched into template methods that call each other would show more than one
 * {@code LockTemplate} frame; a template that re-resolved or retried would ask the backend more
 * than once). {@code ./bench.sh --call-trace} traces the same call method by method with JFR.
 */
class CallPathTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private AnnotationConfigApplicationContext context;

	private RecordingRegistry registry;

	@BeforeEach
	void start() throws InterruptedException {
		CuratorFramework client = zooKeeper.newClient();
		this.context = new AnnotationConfigApplicationContext();
		this.context.registerBean(CuratorFramework.class, () -> client);
		this.context.register(Infrastructure.class, Service.class);
		this.context.refresh();
		this.registry = this.context.getBean(RecordingRegistry.class);
	}

	@AfterEach
	void close() {
		this.context.close();
	}

	@Test
	void synchronousCallEntersTheTemplateOnceAndTheBackendOnceEachWay() {
		Service service = this.context.getBean(Service.class);
		// Warm: the recipe of the key exists, as in a running application.
		service.locked("k");
		this.registry.reset();

		assertThat(service.locked("k")).isTrue();

		assertThat(this.registry.acquires).hasValue(1);
		assertThat(this.registry.releases).hasValue(1);
		assertThat(this.registry.stackAtAcquire)
			.filteredOn((frame) -> frame.equals(LockTemplate.class.getName()))
			.as("LockTemplate frames when the backend is asked: %s", this.registry.stackAtAcquire)
			.hasSize(1);
		assertThat(this.registry.stackAtAcquire)
			.filteredOn((frame) -> frame.equals(DistributedLockInterceptor.class.getName()))
			.hasSize(1);
	}

	@Test
	void asynchronousCallAsksTheBackendOnceEachWay() {
		Service service = this.context.getBean(Service.class);
		assertThat(service.lockedAsync("k")).succeedsWithin(Duration.ofSeconds(10)).isEqualTo(true);
		this.registry.reset();

		assertThat(service.lockedAsync("k")).succeedsWithin(Duration.ofSeconds(10)).isEqualTo(true);

		assertThat(this.registry.acquires).hasValue(1);
		// The grant is released after the future completes, on the grant's own thread.
		await().atMost(Duration.ofSeconds(10)).until(() -> this.registry.releases.get() == 1);
	}

	/** Annotated methods, one per kind of invoker. */
	static class Service {

		@DistributedLock(path = "/call-path/#{#key}", waitTime = "5s")
		public boolean locked(String key) {
			return true;
		}

		@DistributedLock(path = "/call-path-async/#{#key}", waitTime = "5s")
		public CompletableFuture<Boolean> lockedAsync(String key) {
			return CompletableFuture.completedFuture(true);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	static class Infrastructure {

		@Bean(destroyMethod = "close")
		CuratorLockRegistry curatorLockRegistry(CuratorFramework client) {
			return new CuratorLockRegistry(client, "/locks", 100);
		}

		@Bean
		RecordingRegistry recordingRegistry(CuratorLockRegistry delegate) {
			return new RecordingRegistry(delegate);
		}

		@Bean
		LockTemplate lockTemplate(RecordingRegistry registry) {
			return new LockTemplate(registry, Duration.ofSeconds(10));
		}

	}

	/** A backend that counts what it is asked and records the zk-lock frames of each acquisition. */
	static final class RecordingRegistry implements LockRegistry {

		private final LockRegistry delegate;

		final AtomicInteger acquires = new AtomicInteger();

		final AtomicInteger releases = new AtomicInteger();

		volatile List<String> stackAtAcquire = List.of();

		RecordingRegistry(LockRegistry delegate) {
			this.delegate = delegate;
		}

		void reset() {
			this.acquires.set(0);
			this.releases.set(0);
			this.stackAtAcquire = List.of();
		}

		@Override
		public Optional<RegistryGrant> tryAcquire(LockTarget target) {
			this.acquires.incrementAndGet();
			List<String> frames = new ArrayList<>();
			StackWalker.getInstance().forEach((frame) -> {
				if (frame.getClassName().startsWith("io.github.zklock.")
						&& !frame.getClassName().startsWith(CallPathTests.class.getName())) {
					frames.add(frame.getClassName());
				}
			});
			this.stackAtAcquire = frames;
			return this.delegate.tryAcquire(target).map(Counted::new);
		}

		@Override
		public String lockPath(String key) {
			return this.delegate.lockPath(key);
		}

		/** A grant whose release is counted. */
		private final class Counted implements RegistryGrant {

			private final RegistryGrant grant;

			Counted(RegistryGrant grant) {
				this.grant = grant;
			}

			@Override
			public String path() {
				return this.grant.path();
			}

			@Override
			public LockMode mode() {
				return this.grant.mode();
			}

			@Override
			public boolean isHeld() {
				return this.grant.isHeld();
			}

			@Override
			public LockState state() {
				return this.grant.state();
			}

			@Override
			public void checkHeld() {
				this.grant.checkHeld();
			}

			@Override
			public long fencingToken() {
				return this.grant.fencingToken();
			}

			@Override
			public boolean isLocalHandoff() {
				return this.grant.isLocalHandoff();
			}

			@Override
			public void release() {
				if (this.grant.isHeld()) {
					RecordingRegistry.this.releases.incrementAndGet();
				}
				this.grant.release();
			}

			@Override
			public CompletableFuture<Void> releaseAsync() {
				if (this.grant.isHeld()) {
					RecordingRegistry.this.releases.incrementAndGet();
				}
				return this.grant.releaseAsync();
			}

			@Override
			public CompletionStage<Void> whenLost() {
				return this.grant.whenLost();
			}

		}

	}

}
