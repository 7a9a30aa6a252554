package io.github.zklock.sample;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties of the sample application, bound to {@code sample.*}.
 */
@ConfigurationProperties("sample")
public class SampleProperties {

	/**
	 * Name of this application instance, recorded with each order so that a run over several
	 * instances shows which one made each sale.
	 */
	private String instanceId = "pid-" + ProcessHandle.current().pid();

	/**
	 * Pause between reading the stock and writing the new value, in both the locked and the
	 * unlocked purchase. Widens the window in which unlocked purchases interleave; a locked
	 * purchase holds its lock for this long longer.
	 */
	private Duration purchaseThinkTime = Duration.ZERO;

	/**
	 * Pause between the grant of a locked purchase and its first write (the fence), as a call to
	 * another service would take. {@code ./demo.sh --chaos} sets it, so that a pause of the
	 * process often falls between the last check of the lock and the write.
	 */
	private Duration purchasePrepareTime = Duration.ZERO;

	public String getInstanceId() {
		return this.instanceId;
	}

	public void setInstanceId(String instanceId) {
		this.instanceId = instanceId;
	}

	public Duration getPurchaseThinkTime() {
		return this.purchaseThinkTime;
	}

	public void setPurchaseThinkTime(Duration purchaseThinkTime) {
		this.purchaseThinkTime = purchaseThinkTime;
	}

	public Duration getPurchasePrepareTime() {
		return this.purchasePrepareTime;
	}

	public void setPurchasePrepareTime(Duration purchasePrepareTime) {
		this.purchasePrepareTime = purchasePrepareTime;
	}

}
