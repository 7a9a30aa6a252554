package io.github.zklock.sample;

import jakarta.servlet.http.HttpServletResponse;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;
import reactor.core.publisher.Mono;

import io.github.zklock.sample.StockController.PurchaseResult;

/**
 * REST API over {@link ReactiveStockService}, below {@code /api/reactive/stock}:
 * {@code POST /{sku}/purchase?quantity=1} buys under the SKU's WRITE lock through R2DBC, answered
 * with the {@link PurchaseResult} of {@code POST /api/stock/{sku}/purchase}, on the same stock.
 *
 * <p>The handler returns a {@code Mono}, which Spring MVC serves asynchronously: the request's
 * thread is freed while the lock is waited for and the purchase runs. The answers are those of the
 * blocking purchase ({@link StockExceptionHandler}): 409 sold out, 404 unknown SKU, 423 lock busy,
 * 409 with {@value StockExceptionHandler#LOCK_LOST_HEADER} {@code stale-fencing-token} when the
 * stock row's fence refused the grant's token, {@code lost} when the lock was lost while the
 * purchase ran or at commit; with the {@value StockController#LOCK_WAIT_HEADER} header when the
 * purchase ran (sold or sold out), measured by {@link ReactiveLockWait}. The application sets no
 * time limit on these answers ({@code spring.mvc.async.request-timeout}), as a blocking request has
 * none: every wait of the purchase is bounded by its own settings (the lock's wait time, the
 * database's lock timeout).
 */
@RestController
@RequestMapping("/api/reactive/stock")
public class ReactiveStockController {

	private final ReactiveStockService stockService;

	/**
	 * Create a controller.
	 * @param stockService the service to call
	 */
	public ReactiveStockController(ReactiveStockService stockService) {
		this.stockService = stockService;
	}

	/**
	 * Buy items of a SKU under its lock, reactively.
	 * @param sku the SKU
	 * @param quantity how many to buy, at least 1
	 * @param response the response, for the {@value StockController#LOCK_WAIT_HEADER} header
	 * @return what was bought and what is left, once committed
	 */
	@PostMapping("/{sku}/purchase")
	public Mono<PurchaseResult> purchase(@PathVariable String sku, @RequestParam(defaultValue = "1") int quantity,
			HttpServletResponse response) {
		// Checked before the service takes the lock: a bad request costs no ZooKeeper round trip.
		StockController.checkSku(sku);
		if (quantity < 1) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "quantity must be at least 1, was " + quantity);
		}
		ReactiveLockWait wait = ReactiveLockWait.start();
		return this.stockService.purchase(sku, quantity)
			.map(PurchaseResult::of)
			// Before the outcome reaches Spring MVC, which then writes the answer (or has the error
			// handler write it, keeping the headers set): also on a sold-out purchase.
			.doOnEach((signal) -> {
				if (signal.isOnNext() || signal.isOnError()) {
					wait.waited()
						.ifPresent((waited) -> response.setHeader(StockController.LOCK_WAIT_HEADER,
								StockController.millis(waited)));
				}
			})
			.contextWrite(wait::addTo);
	}

}
