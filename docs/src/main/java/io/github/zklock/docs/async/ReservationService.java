package io.github.zklock.docs.async;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.stereotype.Service;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import io.github.zklock.OnBusy;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.reactive.ReactiveLockContext;

/**
 * The guide's asynchronous and reactive methods: the lock is held until the result completes.
 */
@Service
public class ReservationService {

	private final Map<String, Integer> stock = new ConcurrentHashMap<>();

	private final Map<String, Long> tokens = new ConcurrentHashMap<>();

	// tag::future[]
	@DistributedLock(path = "/stock/#{#sku}")
	public CompletableFuture<Integer> reserve(String sku, int quantity) {
		// runs once the lock is granted; the lock is held until the returned future completes
		return CompletableFuture.supplyAsync(() -> this.stock.merge(sku, -quantity, Integer::sum));
	}
	// end::future[]

	// tag::reactive[]
	@DistributedLock(path = "/stock/#{#sku}")
	public Mono<Integer> take(String sku) { // nothing happens until subscription
		return ReactiveLockContext.current() // the grant, from the Reactor context
			.map((handle) -> {
				this.tokens.put(sku, handle.fencingToken());
				return this.stock.merge(sku, -1, Integer::sum);
			});
	}

	@DistributedLock(path = "/export/#{#tenant}", waitTime = "0", onBusy = OnBusy.SKIP)
	public Flux<String> export(String tenant) { // every element under one grant; empty when busy
		return Flux.fromIterable(this.stock.keySet()).map((sku) -> tenant + ":" + sku);
	}
	// end::reactive[]

	/**
	 * Set the stock of a SKU, without a lock (tests only).
	 * @param sku the SKU
	 * @param quantity the stock
	 */
	public void setStock(String sku, int quantity) {
		this.stock.put(sku, quantity);
	}

	/**
	 * The fencing token of the last reactive take of a SKU.
	 * @param sku the SKU
	 * @return the token, or {@code null}
	 */
	public Long lastToken(String sku) {
		return this.tokens.get(sku);
	}

}
