package io.github.zklock.aop;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;

import io.github.zklock.LockTemplate;

/**
 * Records the {@code zk.lock.acquire} observations of a template as {@code "<name> <outcome>"},
 * so that a test can check what metrics a call produces.
 */
final class AcquireObservations implements ObservationHandler<Observation.Context> {

	private final List<String> recorded = new CopyOnWriteArrayList<>();

	/**
	 * Observe a template's acquisitions from now on.
	 * @param template the template
	 * @return the recorder
	 */
	static AcquireObservations observe(LockTemplate template) {
		AcquireObservations observations = new AcquireObservations();
		ObservationRegistry registry = ObservationRegistry.create();
		registry.observationConfig().observationHandler(observations);
		template.setObservationRegistry(registry);
		return observations;
	}

	@Override
	public boolean supportsContext(Observation.Context context) {
		return true;
	}

	@Override
	public void onStop(Observation.Context context) {
		if (context.getName().equals("zk.lock.acquire")) {
			this.recorded.add(value(context, "name") + " " + value(context, "outcome"));
		}
	}

	private static String value(Observation.Context context, String key) {
		KeyValue value = context.getLowCardinalityKeyValue(key);
		return (value != null) ? value.getValue() : "(none)";
	}

	/**
	 * Return what was recorded, oldest first.
	 * @return {@code "<name> <outcome>"} per acquisition
	 */
	List<String> recorded() {
		return List.copyOf(this.recorded);
	}

}
