package io.github.zklock.sample;

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
 * <li>{@code GET /{sku}}: the stock, as {@link StockLevel};</li>
 * <li>{@code PUT /{sku}?quantity=50}, or with the JSON body {@code {"quantity": 50}}: set the
 * stock, answered with the new {@link StockLevel};</li>
 * <li>{@code POST /{sku}/purchase?quantity=1}: buy, answered with a {@link PurchaseResult}.</li>
 * </ul>
 * Errors are {@code application/problem+json} documents, see {@link StockExceptionHandler}.
 */
@RestController
@RequestMapping("/api/stock")
public class StockController {

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
	 * Buy items of a SKU.
	 * @param sku the SKU
	 * @param quantity how many to buy, at least 1
	 * @return what was bought and what is left
	 */
	@PostMapping("/{sku}/purchase")
	public PurchaseResult purchase(@PathVariable String sku, @RequestParam(defaultValue = "1") int quantity) {
		// Checked here, before the service takes the lock: a bad request costs no ZooKeeper round trip.
		if (quantity < 1) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "quantity must be at least 1, was " + quantity);
		}
		int remaining = this.stockService.purchase(sku, quantity);
		return new PurchaseResult(sku, quantity, remaining);
	}

	private StockLevel setStock(String sku, int quantity) {
		if (quantity < 0) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "quantity must not be negative, was " + quantity);
		}
		this.stockService.setStock(sku, quantity);
		return new StockLevel(sku, quantity);
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
	 * @param remaining the stock left afterwards
	 */
	public record PurchaseResult(String sku, int purchased, int remaining) {
	}

	/**
	 * Body of {@code PUT /api/stock/{sku}}.
	 *
	 * @param quantity the new stock, required
	 */
	public record StockUpdate(@Nullable Integer quantity) {
	}

}
