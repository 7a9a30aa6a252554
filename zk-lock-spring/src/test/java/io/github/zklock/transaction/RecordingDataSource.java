package io.github.zklock.transaction;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import javax.sql.DataSource;

import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * A DataSource that records the SQL of every statement prepared or created on its connections,
 * in order, so that a test can say which statements a call issued (and that it issued none).
 */
final class RecordingDataSource extends DelegatingDataSource {

	/** What is recorded for a plain {@code Statement}, whose SQL is only known when it runs. */
	static final String PLAIN_STATEMENT = "<createStatement>";

	private final List<String> statements = new CopyOnWriteArrayList<>();

	RecordingDataSource(DataSource target) {
		super(target);
	}

	/**
	 * Return the statements recorded since the last {@link #clear()}.
	 * @return the SQL of each statement, in order
	 */
	List<String> statements() {
		return List.copyOf(this.statements);
	}

	void clear() {
		this.statements.clear();
	}

	@Override
	public Connection getConnection() throws SQLException {
		return recording(super.getConnection());
	}

	@Override
	public Connection getConnection(String username, String password) throws SQLException {
		return recording(super.getConnection(username, password));
	}

	private Connection recording(Connection target) {
		return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { Connection.class },
				(proxy, method, args) -> {
					switch (method.getName()) {
						case "prepareStatement", "prepareCall" -> this.statements.add((String) args[0]);
						case "createStatement" -> this.statements.add(PLAIN_STATEMENT);
						default -> {
						}
					}
					try {
						return method.invoke(target, args);
					}
					catch (InvocationTargetException ex) {
						throw ex.getTargetException();
					}
				});
	}

}
