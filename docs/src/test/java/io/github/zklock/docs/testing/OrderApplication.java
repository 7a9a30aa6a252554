package io.github.zklock.docs.testing;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.stereotype.Service;

import io.github.zklock.annotation.DistributedLock;

/**
 * The application of the guide's testing examples: an order service that places each order once.
 */
@SpringBootApplication
public class OrderApplication {

	/**
	 * Places orders, each at most once across every instance.
	 */
	@Service
	public static class OrderService {

		private final Set<String> placed = ConcurrentHashMap.newKeySet();

		/**
		 * Place an order unless it was placed.
		 * @param orderId the order
		 * @return whether this call placed it
		 */
		@DistributedLock(path = "/orders/#{#orderId}", waitTime = "5s")
		public boolean place(String orderId) {
			return this.placed.add(orderId);
		}

	}

}
