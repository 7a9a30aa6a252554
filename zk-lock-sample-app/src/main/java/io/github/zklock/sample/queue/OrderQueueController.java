package io.github.zklock.sample.queue;

import java.time.Duration;
import java.util.regex.Pattern;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * REST API over {@link OrderQueueService}, below {@code /api/orders/queue}:
 * <ul>
 * <li>{@code POST ?item=o-1[&queue=orders][&waitMs=5000]}: add an item, waiting while the queue
 * is full; 201 with {@link OrderQueueService.Put} when added, 503 with the same body
 * ({@code "added": false}) when the wait ran out first (nothing added);</li>
 * <li>{@code POST /take[?queue=orders][&waitMs=5000]}: take the oldest item, waiting while the
 * queue is empty; 200 with {@link OrderQueueService.Take}, 204 without a body when the wait ran out
 * first.</li>
 * </ul>
 * Both answer with the {@value #WAITS_HEADER} header: how many times the call waited on the queue's
 * condition. A queue name and an item are 1 to 100 letters, digits, {@code .}, {@code _} or
 * {@code -}, starting with a letter or digit; {@code waitMs} is 0 to {@code sample.queue.max-wait}.
 * A lock lost while waiting is answered as by the stock API (409, {@code X-Lock-Lost: lost}).
 */
@RestController
@RequestMapping("/api/orders/queue")
public class OrderQueueController {

	/** Response header: how many times the call waited on the queue's condition. */
	public static final String WAITS_HEADER = "X-Condition-Waits";

	/** The queue of a call that names none. */
	public static final String DEFAULT_QUEUE = "orders";

	private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,99}");

	private final OrderQueueService queues;

	private final Duration maxWait;

	/**
	 * Create the controller.
	 * @param queues the queues
	 * @param properties the longest wait a call may ask for
	 */
	public OrderQueueController(OrderQueueService queues, OrderQueueProperties properties) {
		this.queues = queues;
		this.maxWait = properties.getMaxWait();
	}

	/**
	 * Add an item.
	 * @param item the item
	 * @param queue the queue's name
	 * @param waitMs the longest wait, in milliseconds
	 * @return 201 when added, 503 when the wait ran out
	 * @throws InterruptedException if the request's thread is interrupted
	 */
	@PostMapping
	public ResponseEntity<OrderQueueService.Put> put(@RequestParam String item,
			@RequestParam(defaultValue = DEFAULT_QUEUE) String queue, @RequestParam(defaultValue = "5000") long waitMs)
			throws InterruptedException {
		OrderQueueService.Put put = this.queues.put(checkName("queue", queue), checkName("item", item),
				maxWait(waitMs));
		return ResponseEntity.status(put.added() ? HttpStatus.CREATED : HttpStatus.SERVICE_UNAVAILABLE)
			.header(WAITS_HEADER, String.valueOf(put.waits()))
			.body(put);
	}

	/**
	 * Take the oldest item.
	 * @param queue the queue's name
	 * @param waitMs the longest wait, in milliseconds
	 * @return 200 with the item, 204 when the wait ran out
	 * @throws InterruptedException if the request's thread is interrupted
	 */
	@PostMapping("/take")
	public ResponseEntity<OrderQueueService.Take> take(@RequestParam(defaultValue = DEFAULT_QUEUE) String queue,
			@RequestParam(defaultValue = "5000") long waitMs) throws InterruptedException {
		OrderQueueService.Take take = this.queues.take(checkName("queue", queue), maxWait(waitMs));
		ResponseEntity.BodyBuilder answer = ResponseEntity
			.status((take.item() != null) ? HttpStatus.OK : HttpStatus.NO_CONTENT)
			.header(WAITS_HEADER, String.valueOf(take.waits()));
		return (take.item() != null) ? answer.body(take) : answer.build();
	}

	private Duration maxWait(long waitMs) {
		if (waitMs < 0 || waitMs > this.maxWait.toMillis()) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
					"waitMs must be 0 to " + this.maxWait.toMillis() + ", was " + waitMs);
		}
		return Duration.ofMillis(waitMs);
	}

	private static String checkName(String what, String name) {
		if (!NAME.matcher(name).matches()) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST, what
					+ " must be 1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit");
		}
		return name;
	}

}
