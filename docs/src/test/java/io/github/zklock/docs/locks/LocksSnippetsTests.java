package io.github.zklock.docs.locks;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.MapPropertySource;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockTemplate;
import io.github.zklock.autoconfigure.ZkLockAutoConfiguration;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * The snippets of the guide's chapter on locks run as written, on a real ZooKeeper: the annotated
 * service through the starter, the template's verbs, the configuration without Spring Boot and
 * the library without Spring.
 */
class LocksSnippetsTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(ZkLockAutoConfiguration.class))
		.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString())
		.withBean(StockService.class);

	private CuratorFramework other;

	private CuratorLockRegistry otherRegistry;

	private LockTemplate otherProcess;

	@BeforeEach
	void otherProcess() throws InterruptedException {
		this.other = zooKeeper.newClient();
		this.otherRegistry = new CuratorLockRegistry(this.other, "/locks", 100);
		this.otherProcess = new LockTemplate(this.otherRegistry, Duration.ZERO);
	}

	@AfterEach
	void closeOtherProcess() {
		this.otherRegistry.close();
	}

	@Test
	void annotatedServiceLocksTheSkuAndExcludesAnotherProcess() {
		this.contextRunner.run((context) -> {
			StockService stock = context.getBean(StockService.class);
			stock.restock("apple", 2);
			assertThat(stock.purchase("apple", 1)).isEqualTo(1);
			assertThat(stock.lastToken("apple")).isPositive();
			assertThat(stock.available("apple")).isEqualTo(1);
			try (LockHandle held = this.otherProcess.acquire("/stock/apple", LockMode.WRITE, Duration.ZERO)) {
				ExecutorService caller = Executors.newSingleThreadExecutor();
				try {
					Future<Integer> purchase = caller.submit(() -> stock.purchase("apple", 1));
					// The purchase queues (up to its 2 s) behind the other process's WRITE lock.
					await().atMost(Duration.ofSeconds(10))
						.until(() -> new CuratorLockAdmin(this.otherRegistry).describeQueue("/stock/apple").waiters() == 1);
					assertThat(purchase).isNotDone();
					held.release();
					assertThat(purchase.get(10, TimeUnit.SECONDS)).isZero();
				}
				finally {
					caller.shutdownNow();
				}
			}
		});
	}

	@Test
	void callingTheServiceWithoutItsProxyFailsTheLockAssertion() {
		assertThatIllegalStateException().isThrownBy(() -> new StockService().purchase("pear", 1))
			.withMessageContaining("holds none");
	}

	@Test
	void templateVerbsRunAndSkipAsTheGuideSays() {
		this.contextRunner.run((context) -> {
			TemplateUsage usage = new TemplateUsage(context.getBean(LockTemplate.class));
			assertThat(usage.take("apple")).isEqualTo(-1);
			assertThat(usage.report()).isPositive();
			assertThat(usage.rebuildIndex()).isTrue();
			try (LockHandle held = this.otherProcess.acquire("/jobs/rebuild-index", LockMode.EXCLUSIVE,
					Duration.ZERO)) {
				assertThat(usage.rebuildIndex()).as("skipped while another process holds the job").isFalse();
			}
		});
	}

	@Test
	void configurationWithoutSpringBootProxiesAnnotatedBeans() {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
			context.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource("test",
						Map.of("zk.connect-string", zooKeeper.getConnectString())));
			context.register(NoBootConfiguration.class, Beans.class);
			context.refresh();
			StockService stock = context.getBean(StockService.class);
			stock.restock("kiwi", 1);
			assertThat(stock.purchase("kiwi", 1)).isZero();
			assertThat(stock.lastToken("kiwi")).isPositive();
		}
	}

	@Test
	void libraryWithoutSpringLocksOnTheEnsemble() throws Exception {
		Callable<Long> lockOnce = () -> PlainJava.lockOnce(zooKeeper.getConnectString());
		assertThat(lockOnce.call()).isPositive();
	}

	@Configuration(proxyBeanMethods = false)
	static class Beans {

		@Bean
		StockService stockService() {
			return new StockService();
		}

	}

}
