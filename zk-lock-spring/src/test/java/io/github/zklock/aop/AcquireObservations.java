package io.github.zklock.aop;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import org.springframework.context.ApplicationContext;

/**
 * Records the {@code zk.lock.acquire} observations of a template as {@code "<name> <outcome>"},
 * and each one's low-cardinality key values (what a meter is tagged with), so that a test can
 * check what metrics a call produces.
 */
final class AcquireObservations implements ObservationHandler<Observation.Context> {

	private final List<String> recorded = new CopyOnWriteArrayList<>();

	private final List<Map<String, String>> tags = new CopyOnWriteArrayList<>();

	/**
	 * Observe an application's acquisitions from now on (see {@link LockApplications}): its
	 * recorder, emptied.
	 * @param application the application
	 * @return the recorder
	 */
	static AcquireObservations observe(ApplicationContext application) {
		AcquireObservations observations = application.getBean(AcquireObservations.class);
		observations.recorded.clear();
		observations.tags.clear();
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
			Map<String, String> tags = new TreeMap<>();
			for (KeyValue keyValue : context.getLowCardinalityKeyValues()) {
				tags.put(keyValue.getKey(), keyValue.getValue());
			}
			this.tags.add(tags);
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

	/**
	 * Return the low-cardinality key values of each acquisition, oldest first.
	 * @return the key values by key, one map per acquisition
	 */
	List<Map<String, String>> tags() {
		return List.copyOf(this.tags);
	}

}
