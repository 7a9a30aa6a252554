package io.github.zklock.sample;

/**
 * Thrown by {@link StockService} when a SKU has no row in the {@code stock} table; set its stock
 * first with {@link StockService#setStock(String, int)}.
 */
public class UnknownSkuException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final String sku;

	/**
	 * Create an exception.
	 * @param sku the unknown SKU
	 */
	public UnknownSkuException(String sku) {
		super("Unknown SKU '" + sku + "'");
		this.sku = sku;
	}

	/**
	 * Return the unknown SKU.
	 * @return the SKU
	 */
	public String getSku() {
		return this.sku;
	}

}
