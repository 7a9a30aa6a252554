package io.github.zklock.sample;

import java.time.Duration;
import java.util.Locale;
import java.util.function.BiFunction;
import java.util.regex.Pattern;

import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * REST API over {@link StockService}, below {@code /api/stock}:
 * <ul>
 * <li>{@code GET /{sku}}: the stock, as {@link StockLevel}, read under the SKU's READ lock;</li>
 * <li>{@code PUT /{sku}?quantity=50}, or with the JSON body {@code {"quantity": 50}}: set the
 * stock, answered with the new {@link StockLevel};</li>
 * <li>{@code POST /{sku}/purchase?quantity=1}: buy under the SKU's WRITE lock, answered with a
 * {@link PurchaseResult};</li>
 * <li>{@code POST /{sku}/purchase-unlocked?quantity=1}: the same purchase without the lock, for
 * comparison: concurrent calls lose updates and oversell.</li>
 * </ul>
 * Both purchases answer with the {@value #LOCK_WAIT_HEADER} header: the milliseconds from the call
 * into the service to the start of the purchase code, see {@link LockWaitTimer}. A SKU is 1 to 100
 * letters, digits, {@code .}, {@code _} or {@code -}, starting with a letter or digit. Errors are
 * {@code application/problem+json} documents, see {@link StockExceptionHandler}.
 */
@RestController
@RequestMapping("/api/stock")
public class StockController {

	/**
	 * Response header of a purchase that ran: how long it waited before its code started, in
	 * milliseconds with a fraction, for example {@code 12.345}.
	 */
	public static final String LOCK_WAIT_HEADER = "X-Lock-Wait-Ms";

	private static final Pattern SKU = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,99}");

	private final StockService stockService;

	/**
	 * Create a controller.
	 * @param stockService the service to call
	 */
	public StockController(StockService stockService) {
		this.stockService = stockService;
	}

	/**
	 * Return the stock of a SKU.
	 * @param sku the SKU
	 * @return the stock
	 */
	@GetMapping("/{sku}")
	public StockLevel getStock(@PathVariable String sku) {
		checkSku(sku);
		return new StockLevel(sku, this.stockService.getStock(sku));
	}

	/**
	 * Set the stock of a SKU from the {@code quantity} request parameter.
	 * @param sku the SKU
	 * @param quantity the new stock, at least 0
	 * @return the new stock
	 */
	@PutMapping(path = "/{sku}", params = "quantity")
	public StockLevel setStockFromParameter(@PathVariable String sku, @RequestParam int quantity) {
		return setStock(sku, quantity);
	}

	/**
	 * Set the stock of a SKU from a JSON body such as {@code {"quantity": 50}}.
	 * @param sku the SKU
	 * @param update the body
	 * @return the new stock
	 */
	@PutMapping(path = "/{sku}", consumes = MediaType.APPLICATION_JSON_VALUE)
	public StockLevel setStockFromBody(@PathVariable String sku, @RequestBody StockUpdate update) {
		if (update.quantity() == null) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "quantity is required");
		}
		return setStock(sku, update.quantity());
	}

	/**
	 * Buy items of a SKU under its lock.
	 * @param sku the SKU
	 * @param quantity how many to buy, at least 1
	 * @param response the response, for the {@value #LOCK_WAIT_HEADER} header
	 * @return what was bought and what is left
	 */
	@PostMapping("/{sku}/purchase")
	public PurchaseResult purchase(@PathVariable String sku, @RequestParam(defaultValue = "1") int quantity,
			HttpServletResponse response) {
		return purchase(sku, quantity, response, this.stockService::purchase);
	}

	/**
	 * Buy items of a SKU without the lock, for comparison with {@link #purchase}.
	 * @param sku the SKU
	 * @param quantity how many to buy, at least 1
	 * @param response the response, for the {@value #LOCK_WAIT_HEADER} header
	 * @return what was bought and what this purchase wrote back as the stock left
	 */
	@PostMapping("/{sku}/purchase-unlocked")
	public PurchaseResult purchaseWithoutLock(@PathVariable String sku,
			@RequestParam(defaultValue = "1") int quantity, HttpServletResponse response) {
		return purchase(sku, quantity, response, this.stockService::purchaseWithoutLock);
	}

	private PurchaseResult purchase(String sku, int quantity, HttpServletResponse response,
			BiFunction<String, Integer, Purchase> purchase) {
		// Checked here, before the service takes the lock: a bad request costs no ZooKeeper round trip.
		checkSku(sku);
		if (quantity < 1) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "quantity must be at least 1, was " + quantity);
		}
		LockWaitTimer.start();
		try {
			return PurchaseResult.of(purchase.apply(sku, quantity));
		}
		finally {
			// Also on a sold-out purchase: it waited for the lock like a successful one. The error
			// handler keeps the headers already set.
			LockWaitTimer.stop().ifPresent((wait) -> response.setHeader(LOCK_WAIT_HEADER, millis(wait)));
		}
	}

	private StockLevel setStock(String sku, int quantity) {
		checkSku(sku);
		if (quantity < 0) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "quantity must not be negative, was " + quantity);
		}
		this.stockService.setStock(sku, quantity);
		return new StockLevel(sku, quantity);
	}

	static void checkSku(String sku) {
		if (!SKU.matcher(sku).matches()) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
					"sku must be 1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit");
		}
	}

	static String millis(Duration duration) {
		return String.format(Locale.ROOT, "%.3f", duration.toNanos() / 1_000_000.0);
	}

	/**
	 * The stock of a SKU.
	 *
	 * @param sku the SKU
	 * @param quantity the quantity in stock
	 */
	public record StockLevel(String sku, int quantity) {
	}

	/**
	 * The outcome of a purchase.
	 *
	 * @param sku the SKU
	 * @param purchased how many were bought
	 * @param remaining the stock this purchase wrote back
	 * @param orderId the id of the recorded order
	 * @param fencingToken the fencing token of the lock grant, {@code null} without the lock
	 * @param instance the application instance that served the purchase
	 */
	public record PurchaseResult(String sku, int purchased, int remaining, long orderId, @Nullable Long fencingToken,
			String instance) {

		static PurchaseResult of(Purchase purchase) {
			return new PurchaseResult(purchase.sku(), purchase.quantity(), purchase.remaining(), purchase.orderId(),
					purchase.fencingToken(), purchase.instanceId());
		}

	}

	/**
	 * Body of {@code PUT /api/stock/{sku}}.
	 *
	 * @param quantity the new stock, required
	 */
	public record StockUpdate(@Nullable Integer quantity) {
	}

}
