package io.github.zklock.sample.queue;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties of the order queues, bound to {@code sample.queue.*}.
 */
@ConfigurationProperties("sample.queue")
public class OrderQueueProperties {

	/**
	 * How many items a queue holds at most: a producer waits while it holds this many.
	 */
	private int capacity = 5;

	/**
	 * The longest wait a request may ask for, for the queue's lock and then for room or an item.
	 */
	private Duration maxWait = Duration.ofSeconds(30);

	public int getCapacity() {
		return this.capacity;
	}

	public void setCapacity(int capacity) {
		this.capacity = capacity;
	}

	public Duration getMaxWait() {
		return this.maxWait;
	}

	public void setMaxWait(Duration maxWait) {
		this.maxWait = maxWait;
	}

}
