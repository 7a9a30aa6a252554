package io.github.zklock.docs.lost;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

import io.github.zklock.LockState;
import io.github.zklock.LockStateEvent;

/**
 * The guide's listener of lost locks.
 */
@Component
public class LostLocks {

	private final List<LockStateEvent> lost = new CopyOnWriteArrayList<>();

	// tag::listener[]
	@EventListener
	void on(LockStateEvent event) {
		if (event.state() == LockState.LOST) {
			// another client may hold the lock now: stop, or let the store's fence refuse the writes
			this.lost.add(event);
		}
	}
	// end::listener[]

	/**
	 * The LOST events seen.
	 * @return the events
	 */
	public List<LockStateEvent> lost() {
		return this.lost;
	}

}
