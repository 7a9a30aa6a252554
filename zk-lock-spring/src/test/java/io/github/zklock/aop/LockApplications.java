package io.github.zklock.aop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import io.micrometer.observation.ObservationRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.zklock.LockTemplate;
import io.github.zklock.annotation.EnableDistributedLocks;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

/**
 * Starts "an application" for the tests: a plain Spring context with
 * {@code @EnableDistributedLocks}, its own Curator client of the extension's server (so two
 * contexts are two ZooKeeper sessions, as two processes would be), a registry on {@code /locks}
 * and a template waiting 10 s by default, whose acquisitions are recorded ({@link AcquireObservations},
 * a bean, on the test's {@code ObservationRegistry} bean when it registers one) and whose
 * asynchronous work runs on the {@code lockAsyncExecutor} bean when the test registers one, plus
 * the test's components.
 */
final class LockApplications {

	private LockApplications() {
	}

	/**
	 * Start an application.
	 * @param zooKeeper the server
	 * @param beans registers beans shared with the test (may do nothing)
	 * @param components the services, registered as beans (constructor injection)
	 * @return the refreshed context; the caller closes it (the extension closes the client)
	 * @throws InterruptedException if interrupted while connecting
	 */
	static AnnotationConfigApplicationContext start(ZooKeeperExtension zooKeeper,
			Consumer<AnnotationConfigApplicationContext> beans, Class<?>... components) throws InterruptedException {
		CuratorFramework client = zooKeeper.newClient();
		AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
		context.registerBean(CuratorFramework.class, () -> client);
		context.register(Infrastructure.class);
		beans.accept(context);
		context.register(components);
		context.refresh();
		return context;
	}

	/** What a plain Spring application defines on its Curator client. */
	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	static class Infrastructure {

		@Bean(destroyMethod = "close")
		CuratorLockRegistry lockRegistry(CuratorFramework client) {
			return new CuratorLockRegistry(client, "/locks", 10_000);
		}

		@Bean
		AcquireObservations acquireObservations() {
			return new AcquireObservations();
		}

		@Bean
		LockTemplate lockTemplate(CuratorLockRegistry lockRegistry, AcquireObservations observations,
				@Qualifier("lockAsyncExecutor") ObjectProvider<Executor> asyncExecutor,
				ObjectProvider<ObservationRegistry> testObservationRegistry) {
			ObservationRegistry observationRegistry = testObservationRegistry.getIfAvailable(ObservationRegistry::create);
			observationRegistry.observationConfig().observationHandler(observations);
			return LockTemplate.builder(lockRegistry)
				.defaultWaitTime(Duration.ofSeconds(10))
				.observationRegistry(observationRegistry)
				.asyncExecutor(asyncExecutor.getIfAvailable())
				.build();
		}

	}

	/**
	 * Run the tasks together, released at once by a latch, and wait for all of them within a bound:
	 * a deadlock between them fails the test by the bound rather than hanging it.
	 * @param bound how long to wait for each task
	 * @param tasks the tasks, one thread each
	 * @throws Exception what a task threw (wrapped in an {@link ExecutionException}), or a
	 * {@link TimeoutException} past the bound
	 */
	static void runConcurrently(Duration bound, Callable<?>... tasks) throws Exception {
		ExecutorService pool = Executors.newFixedThreadPool(tasks.length);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<?>> running = new ArrayList<>();
			for (Callable<?> task : tasks) {
				running.add(pool.submit(() -> {
					start.await(10, TimeUnit.SECONDS);
					return task.call();
				}));
			}
			start.countDown();
			for (Future<?> task : running) {
				task.get(bound.toMillis(), TimeUnit.MILLISECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
	}

}
