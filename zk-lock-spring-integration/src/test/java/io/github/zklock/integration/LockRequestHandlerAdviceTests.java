package io.github.zklock.integration;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.curator.framework.CuratorFramework;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.config.EnableIntegration;
import org.springframework.integration.dsl.IntegrationFlow;
import org.springframework.integration.handler.advice.LockRequestHandlerAdvice;
import org.springframework.messaging.Message;
import org.springframework.messaging.MessageChannel;
import org.springframework.messaging.MessageHandlingException;
import org.springframework.messaging.support.MessageBuilder;

import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Spring Integration's {@link LockRequestHandlerAdvice} on {@link ZkLockRegistry}, in two
 * "applications" (two Spring Integration contexts, each on its own ZooKeeper client): a flow whose
 * handler is advised to run under the lock of the message's {@code orderId} header, waiting for it
 * without limit, or for the message's {@code wait} header when it has one (the advice then calls
 * {@code executeLocked} with that duration).
 */
class LockRequestHandlerAdviceTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final Duration BOUND = Duration.ofSeconds(10);

	/** What the handlers of both applications did, in order: "begin order-1", "end order-1". */
	private final List<String> handled = new CopyOnWriteArrayList<>();

	private final CountDownLatch releaseFirst = new CountDownLatch(1);

	private final ExecutorService sender = Executors.newSingleThreadExecutor();

	private Application first;

	private AnnotationConfigApplicationContext firstContext;

	private AnnotationConfigApplicationContext secondContext;

	@BeforeEach
	void start() throws InterruptedException {
		this.first = Application.start(zooKeeper);
		this.firstContext = context(this.first, "first");
		this.secondContext = context(Application.start(zooKeeper), "second");
	}

	@AfterEach
	void stop() {
		this.releaseFirst.countDown();
		this.sender.shutdownNow();
		if (this.firstContext != null) {
			this.firstContext.close();
		}
		if (this.secondContext != null) {
			this.secondContext.close();
		}
	}

	@Test
	void anotherApplicationTimesOutOnTheSameKeyAndPassesOnAnother() throws Exception {
		CompletableFuture<Void> holding = CompletableFuture.runAsync(() -> send(this.firstContext, "order-1", null),
				this.sender);
		await().atMost(BOUND).until(() -> this.handled.contains("first begin order-1"));

		assertThatExceptionOfType(MessageHandlingException.class)
			.isThrownBy(() -> send(this.secondContext, "order-1", Duration.ofMillis(200)))
			.withMessageContaining("Could not acquire the lock in time")
			.withCauseInstanceOf(TimeoutException.class);
		send(this.secondContext, "order-2", Duration.ofMillis(200));
		assertThat(this.handled).containsExactly("first begin order-1", "second begin order-2",
				"second end order-2");

		this.releaseFirst.countDown();
		holding.get(10, TimeUnit.SECONDS);
		send(this.secondContext, "order-1", Duration.ofSeconds(5));
		assertThat(this.handled).endsWith("first end order-1", "second begin order-1", "second end order-1");
		assertThat(new CuratorLockAdmin(this.first.registry()).heldLockCount()).isZero();
	}

	@Test
	void anotherApplicationWaitsForTheSameKeyWithoutAWaitTime() throws Exception {
		CompletableFuture<Void> holding = CompletableFuture.runAsync(() -> send(this.firstContext, "order-1", null),
				this.sender);
		await().atMost(BOUND).until(() -> this.handled.contains("first begin order-1"));
		CompletableFuture<Void> waiting = CompletableFuture.runAsync(() -> send(this.secondContext, "order-1", null));
		CuratorFramework observer = zooKeeper.newClient();
		// The other application queues a znode behind the holder's.
		await().atMost(BOUND)
			.until(() -> observer.getChildren().forPath(Application.lockPath("order-1")).size() == 2);
		assertThat(waiting).isNotDone();

		this.releaseFirst.countDown();
		holding.get(10, TimeUnit.SECONDS);
		waiting.get(10, TimeUnit.SECONDS);
		assertThat(this.handled).containsExactly("first begin order-1", "first end order-1", "second begin order-1",
				"second end order-1");
	}

	private static void send(AnnotationConfigApplicationContext context, String orderId, @Nullable Duration wait) {
		MessageBuilder<String> message = MessageBuilder.withPayload("process").setHeader("orderId", orderId);
		if (wait != null) {
			message.setHeader("wait", wait);
		}
		context.getBean("orders", MessageChannel.class).send(message.build());
	}

	private AnnotationConfigApplicationContext context(Application application, String name) {
		AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
		context.registerBean(ZkLockRegistry.class, application::locks);
		context.registerBean(OrderHandler.class, () -> new OrderHandler(name, this.handled,
				name.equals("first") ? this.releaseFirst : new CountDownLatch(0)));
		context.register(OrderFlowConfiguration.class);
		context.refresh();
		return context;
	}

	@Configuration(proxyBeanMethods = false)
	@EnableIntegration
	static class OrderFlowConfiguration {

		@Bean
		LockRequestHandlerAdvice lockAdvice(ZkLockRegistry locks) {
			LockRequestHandlerAdvice advice = new LockRequestHandlerAdvice(locks,
					(message) -> message.getHeaders().get("orderId"));
			advice.setWaitLockDurationFunction((message) -> message.getHeaders().get("wait", Duration.class));
			return advice;
		}

		@Bean
		IntegrationFlow orderFlow(OrderHandler handler, LockRequestHandlerAdvice lockAdvice) {
			return IntegrationFlow.from("orders")
				.handle(handler, "handle", (endpoint) -> endpoint.advice(lockAdvice))
				.nullChannel();
		}

	}

	/** Records what it handles; the first application's handler blocks until released. */
	static class OrderHandler {

		private final String name;

		private final List<String> handled;

		private final CountDownLatch release;

		OrderHandler(String name, List<String> handled, CountDownLatch release) {
			this.name = name;
			this.handled = handled;
			this.release = release;
		}

		public String handle(Message<?> message) throws InterruptedException {
			String orderId = message.getHeaders().get("orderId", String.class);
			this.handled.add(this.name + " begin " + orderId);
			if (!this.release.await(10, TimeUnit.SECONDS)) {
				throw new IllegalStateException("Not released");
			}
			this.handled.add(this.name + " end " + orderId);
			return orderId;
		}

	}

}
