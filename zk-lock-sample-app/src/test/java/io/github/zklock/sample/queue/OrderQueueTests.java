package io.github.zklock.sample.queue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import io.github.zklock.sample.SampleInstances;
import io.github.zklock.sample.demo.ConditionReport;
import io.github.zklock.sample.demo.ProducerConsumerLoad;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two instances of the sample application ({@link SampleInstances}) sharing order queues of
 * capacity {@value #CAPACITY}: a producer or consumer waiting on the queue's distributed condition
 * in one instance is woken by the other side's signal in the other instance, and the demo's
 * producers and consumers move every item once.
 */
class OrderQueueTests {

	private static final int CAPACITY = 2;

	@RegisterExtension
	static final SampleInstances instances = new SampleInstances("order-queue", List.of("instance-a", "instance-b"),
			"--sample.queue.capacity=" + CAPACITY, "--sample.report.enabled=false");

	@Test
	void consumerWaitingOnOneInstanceIsWokenByAProducerOnTheOther() throws Exception {
		String queue = "wake-consumer";
		CompletableFuture<OrderQueueService.Take> take = CompletableFuture
			.supplyAsync(() -> call(() -> queues(1).take(queue, Duration.ofSeconds(20))));
		awaitWaiter(1);
		OrderQueueService.Put put = queues(0).put(queue, "o-1", Duration.ofSeconds(5));
		assertThat(put.added()).isTrue();
		OrderQueueService.Take taken = take.get(20, TimeUnit.SECONDS);
		assertThat(taken.item()).isEqualTo("o-1");
		assertThat(taken.producer()).isEqualTo("instance-a");
		assertThat(taken.instance()).isEqualTo("instance-b");
		assertThat(taken.waits()).isPositive();
		assertThat(taken.ageMillis()).isNotNegative().isLessThan(20_000);
	}

	@Test
	void producerWaitingForRoomOnOneInstanceIsWokenByAConsumerOnTheOther() throws Exception {
		String queue = "wake-producer";
		for (int i = 0; i < CAPACITY; i++) {
			assertThat(queues(0).put(queue, "o-" + i, Duration.ofSeconds(5)).added()).isTrue();
		}
		CompletableFuture<OrderQueueService.Put> put = CompletableFuture
			.supplyAsync(() -> call(() -> queues(0).put(queue, "o-late", Duration.ofSeconds(20))));
		awaitWaiter(0);
		assertThat(queues(1).take(queue, Duration.ofSeconds(5)).item()).isEqualTo("o-0");
		OrderQueueService.Put late = put.get(20, TimeUnit.SECONDS);
		assertThat(late.added()).isTrue();
		assertThat(late.waits()).isPositive();
		assertThat(late.depth()).isEqualTo(CAPACITY);
		// First in, first out, across the instances.
		assertThat(queues(1).take(queue, Duration.ofSeconds(5)).item()).isEqualTo("o-1");
		assertThat(queues(0).take(queue, Duration.ofSeconds(5)).item()).isEqualTo("o-late");
	}

	@Test
	void waitsThatRunOutChangeNothing() throws Exception {
		String queue = "run-out";
		OrderQueueService.Take none = queues(0).take(queue, Duration.ofMillis(200));
		assertThat(none.item()).isNull();
		assertThat(none.waits()).isPositive();
		for (int i = 0; i < CAPACITY; i++) {
			queues(1).put(queue, "o-" + i, Duration.ofSeconds(5));
		}
		OrderQueueService.Put full = queues(0).put(queue, "o-extra", Duration.ofMillis(200));
		assertThat(full.added()).isFalse();
		assertThat(full.depth()).isEqualTo(CAPACITY);
		HttpResponse<String> answer = post("/api/orders/queue?queue=" + queue + "&item=o-extra&waitMs=100");
		assertThat(answer.statusCode()).isEqualTo(503);
		assertThat(answer.headers().firstValue(OrderQueueController.WAITS_HEADER).map(Integer::parseInt))
			.hasValueSatisfying((waits) -> assertThat(waits).isPositive());
		assertThat(post("/api/orders/queue?queue=" + queue + "&item=o+x").statusCode()).isEqualTo(400);
	}

	@Test
	void producersAndConsumersOnDifferentInstancesMoveEveryItemOnce() throws Exception {
		ProducerConsumerLoad.Options options = new ProducerConsumerLoad.Options(
				List.of(baseUri(instances.instance(0)), baseUri(instances.instance(1))), "load", 30, 2, 2,
				Duration.ofSeconds(60));
		ProducerConsumerLoad.Outcome outcome = new ProducerConsumerLoad().run(options);
		ConditionReport report = outcome.report();
		assertThat(report.consistent()).as(report.toLine()).isTrue();
		assertThat(report.capacity()).isEqualTo(CAPACITY);
		assertThat(outcome.unexpectedAnswers()).as(outcome.answers().toString()).isZero();
		assertThat(report.toLine()).matches("CONDITION items=30 produced=30 consumed=30 duplicates=0 lost=0 capacity=2 "
				+ "max_depth=[12] producer_waits=\\d+ consumer_waits=\\d+ wake_p50_ms=\\d+ wake_p99_ms=\\d+ "
				+ "items_per_second=\\d+\\.\\d");
	}

	/**
	 * Wait until a call of an instance waits on a queue's condition: once the other side is granted
	 * the queue's lock, the waiter is queued, and the other side's signal reaches it.
	 */
	private static void awaitWaiter(int instance) {
		await().atMost(Duration.ofSeconds(10)).until(() -> queues(instance).waiting() > 0);
	}

	private static HttpResponse<String> post(String pathAndQuery) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(baseUri(instances.instance(1)).resolve(pathAndQuery))
			.POST(HttpRequest.BodyPublishers.noBody())
			.timeout(Duration.ofSeconds(30))
			.build();
		return HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
	}

	private static OrderQueueService queues(int instance) {
		return instances.instance(instance).getBean(OrderQueueService.class);
	}

	private static URI baseUri(ConfigurableApplicationContext context) {
		int port = ((WebServerApplicationContext) context).getWebServer().getPort();
		return URI.create("http://127.0.0.1:" + port);
	}

	private static <T> T call(Waiting<T> call) {
		try {
			return call.call();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	@FunctionalInterface
	private interface Waiting<T> {

		T call() throws InterruptedException;

	}

}
