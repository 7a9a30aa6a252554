package io.github.zklock.sample.chaos;

import java.util.Locale;

/**
 * The endpoint an increment of a counter came through, recorded in
 * {@code chaos_counter_op.via} as {@link #column()}.
 */
public enum Via {

	/** Under the counter's lock and the row's fence, on the request thread. */
	FENCED,

	/** Under the counter's lock only: a zombie's write is not refused. */
	UNFENCED,

	/** Under the counter's lock and the row's fence, through the asynchronous template. */
	ASYNC;

	/**
	 * Return the value of the {@code via} column.
	 * @return the lower-case name: {@code fenced}, {@code unfenced} or {@code async}
	 */
	public String column() {
		return name().toLowerCase(Locale.ROOT);
	}

	/**
	 * Return whether increments of this kind advance the row's fence before they read.
	 * @return {@code false} for {@link #UNFENCED} only
	 */
	public boolean isFenced() {
		return this != UNFENCED;
	}

}
