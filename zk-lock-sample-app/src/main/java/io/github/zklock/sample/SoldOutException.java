package io.github.zklock.sample;

/**
 * Thrown by {@link StockService#purchase(String, int)} when the SKU has less stock than asked
 * for. Nothing was bought; the stock is unchanged.
 */
public class SoldOutException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final String sku;

	private final int requested;

	private final int available;

	/**
	 * Create an exception.
	 * @param sku the SKU
	 * @param requested the quantity asked for
	 * @param available the quantity in stock
	 */
	public SoldOutException(String sku, int requested, int available) {
		super("Cannot buy " + requested + " of '" + sku + "': " + available + " left");
		this.sku = sku;
		this.requested = requested;
		this.available = available;
	}

	/**
	 * Return the SKU.
	 * @return the SKU
	 */
	public String getSku() {
		return this.sku;
	}

	/**
	 * Return the quantity asked for.
	 * @return the requested quantity
	 */
	public int getRequested() {
		return this.requested;
	}

	/**
	 * Return the quantity that was in stock.
	 * @return the available quantity
	 */
	public int getAvailable() {
		return this.available;
	}

}
