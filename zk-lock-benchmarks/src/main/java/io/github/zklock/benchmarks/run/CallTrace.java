package io.github.zklock.benchmarks.run;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordingFile;
import org.apache.curator.test.TestingServer;
import org.springframework.context.ConfigurableApplicationContext;

import io.github.zklock.benchmarks.LockedService;
import io.github.zklock.benchmarks.LockedServiceApplication;

/**
 * Traces one synchronous {@code @DistributedLock} call through zk-lock's own code with JFR's method
 * tracing ({@code jdk.MethodTrace}, JDK 25 and later): every invocation of a method of a zk-lock
 * class ({@code io.github.zklock}, benchmarks, records and annotations excluded) on the calling
 * thread, in call order, from
 * the proxy's interceptor to the release. Prints the invocations, then one line:
 * {@code CALLTRACE stops=N files=N template_calls=N backend_acquires=N backend_releases=N}, where a
 * stop is one invocation, a file one top-level class, {@code template_calls} the invocations of
 * {@code LockTemplate}'s methods, and the backend counts the invocations of the registry's
 * {@code tryAcquire} and of the release of its grant.
 *
 * <p>Run it on a JDK 25 with the benchmarks' class path:
 * <pre>
 * JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 ./bench.sh --call-trace
 * </pre>
 * On an older JDK the event does not exist and the trace is empty (the line says so).
 */
public final class CallTrace {

	private static final String PACKAGE = "io.github.zklock.";

	private CallTrace() {
	}

	/**
	 * Trace one call.
	 * @param args none
	 * @throws Exception if the server, the application or the recording fails
	 */
	public static void main(String[] args) throws Exception {
		try (TestingServer server = new TestingServer(true)) {
			ConfigurableApplicationContext context = LockedServiceApplication.start(server.getConnectString(), "/trace",
					null);
			try {
				LockedService service = context.getBean(LockedService.class);
				for (int i = 0; i < 500; i++) {
					service.exclusive("k");
				}
				List<RecordedEvent> events = trace(() -> service.exclusive("k"));
				report(events);
			}
			finally {
				context.close();
			}
		}
	}

	@SuppressWarnings("deprecation") // Thread.threadId() needs Java 19; the module is built for 17
	private static List<RecordedEvent> trace(Runnable call) throws IOException, InterruptedException {
		Path file = Files.createTempFile("zk-lock-call-trace", ".jfr");
		long caller = Thread.currentThread().getId();
		try (Recording recording = new Recording()) {
			recording.enable("jdk.MethodTrace").with("filter", String.join(";", zkLockClasses()));
			recording.start();
			// The instrumentation is applied when the recording starts: let it settle, then call once.
			Thread.sleep(500);
			Instant start = Instant.now();
			call.run();
			Instant end = Instant.now();
			recording.stop();
			recording.dump(file);
			List<RecordedEvent> events = new ArrayList<>();
			for (RecordedEvent event : RecordingFile.readAllEvents(file)) {
				if (event.getEventType().getName().equals("jdk.MethodTrace") && event.getThread() != null
						&& event.getThread().getJavaThreadId() == caller && !event.getStartTime().isBefore(start)
						&& !event.getStartTime().isAfter(end)) {
					events.add(event);
				}
			}
			events.sort(Comparator.comparing(RecordedEvent::getStartTime));
			return events;
		}
		finally {
			Files.deleteIfExists(file);
		}
	}

	private static void report(List<RecordedEvent> events) {
		if (events.isEmpty()) {
			System.out.println("CALLTRACE stops=0: no jdk.MethodTrace event (JDK " + Runtime.version().feature()
					+ "; method tracing needs JDK 25)");
			return;
		}
		Map<String, Integer> perFile = new LinkedHashMap<>();
		int templateCalls = 0;
		int backendAcquires = 0;
		int backendReleases = 0;
		for (RecordedEvent event : events) {
			RecordedMethod method = event.getValue("method");
			String type = method.getType().getName();
			String file = type.contains("$") ? type.substring(0, type.indexOf('$')) : type;
			perFile.merge(file.substring(PACKAGE.length()), 1, Integer::sum);
			Instant start = event.getStartTime();
			System.out.printf("  %8.1f us  %s.%s%n", Duration.between(events.get(0).getStartTime(), start).toNanos() / 1000.0,
					type.substring(PACKAGE.length()), method.getName());
			if (type.equals(PACKAGE + "LockTemplate")) {
				templateCalls++;
			}
			if (type.equals(PACKAGE + "curator.CuratorLockRegistry") && method.getName().equals("tryAcquire")) {
				backendAcquires++;
			}
			if (type.equals(PACKAGE + "curator.CuratorLockRegistry") && method.getName().equals("release")) {
				backendReleases++;
			}
		}
		System.out.println("  per file: " + perFile);
		System.out.println("CALLTRACE stops=" + events.size() + " files=" + perFile.size() + " template_calls="
				+ templateCalls + " backend_acquires=" + backendAcquires + " backend_releases=" + backendReleases);
	}

	/** Every zk-lock class on the class path but the benchmarks' own. */
	private static List<String> zkLockClasses() throws IOException {
		TreeSet<String> classes = new TreeSet<>();
		for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
			Path path = Path.of(entry);
			if (Files.isDirectory(path)) {
				try (Stream<Path> files = Files.walk(path)) {
					files.filter((file) -> file.toString().endsWith(".class"))
						.map((file) -> path.relativize(file).toString())
						.forEach((name) -> add(classes, name));
				}
			}
			else if (entry.endsWith(".jar") && Files.isRegularFile(path)) {
				try (JarFile jar = new JarFile(path.toFile())) {
					Enumeration<JarEntry> entries = jar.entries();
					while (entries.hasMoreElements()) {
						add(classes, entries.nextElement().getName());
					}
				}
			}
		}
		return new ArrayList<>(classes);
	}

	private static void add(TreeSet<String> classes, String resource) {
		if (!resource.endsWith(".class") || resource.endsWith("package-info.class")) {
			return;
		}
		String name = resource.substring(0, resource.length() - ".class".length()).replace('/', '.').replace('\\', '.');
		if (!name.startsWith(PACKAGE) || name.startsWith(PACKAGE + "benchmarks.")) {
			return;
		}
		try {
			Class<?> type = Class.forName(name, false, CallTrace.class.getClassLoader());
			// Records (accessors only) and annotations left out: JFR fails to retransform records
			// (JVMTI_ERROR_UNSUPPORTED_REDEFINITION_CLASS_ATTRIBUTE_CHANGED) and breaks them.
			if (!type.isRecord() && !type.isAnnotation()) {
				classes.add(name);
			}
		}
		catch (ClassNotFoundException | LinkageError ex) {
			// Not loadable here (an optional dependency is missing): not on the call path either.
		}
	}

}
