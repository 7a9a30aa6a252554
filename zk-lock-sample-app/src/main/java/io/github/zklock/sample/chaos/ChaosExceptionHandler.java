package io.github.zklock.sample.chaos;

import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.context.annotation.Profile;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockException;
import io.github.zklock.LockLostException;
import io.github.zklock.transaction.StaleFencingTokenException;

/**
 * Turns the exceptions of {@link ChaosController} into flat JSON objects
 * {@code {"error": "...", "message": "...", "op": "..."}} ({@code op} when the request has one),
 * with the statuses and {@code error} values listed on the controller; ordered before the
 * application's {@code StockExceptionHandler}, which answers the other controllers with problem
 * details. Spring MVC's own exceptions (a missing or malformed parameter) answer their 4xx status
 * with {@code "error": "bad-request"}; any 5xx other than ZooKeeper's 503 is {@code unexpected}
 * with status 500, the one answer whose outcome is unknown.
 */
@RestControllerAdvice(assignableTypes = ChaosController.class)
@Order(Ordered.HIGHEST_PRECEDENCE)
@Profile(ChaosConfiguration.PROFILE)
public class ChaosExceptionHandler extends ResponseEntityExceptionHandler {

	/**
	 * Answer a call whose lock was not granted within the wait time.
	 * @param ex the exception
	 * @param request the request
	 * @return 423 {@code lock-busy}, with {@code lockPath}
	 */
	@ExceptionHandler
	public ResponseEntity<Map<String, Object>> handleLockBusy(LockAcquisitionException ex, WebRequest request) {
		return answer(HttpStatus.LOCKED, "lock-busy", ex, request, Map.of("lockPath", ex.getPath()));
	}

	/**
	 * Answer a write refused by a row's fence.
	 * @param ex the exception
	 * @param request the request
	 * @return 409 {@code stale-token}, with {@code lockPath} and {@code token}
	 */
	@ExceptionHandler
	public ResponseEntity<Map<String, Object>> handleStaleToken(StaleFencingTokenException ex, WebRequest request) {
		return answer(HttpStatus.CONFLICT, "stale-token", ex, request,
				Map.of("lockPath", ex.getPath(), "token", ex.getFencingToken()));
	}

	/**
	 * Answer a write whose lock was known lost before it could commit.
	 * @param ex the exception
	 * @param request the request
	 * @return 410 {@code lock-lost}, with {@code lockPath}
	 */
	@ExceptionHandler
	public ResponseEntity<Map<String, Object>> handleLockLost(LockLostException ex, WebRequest request) {
		return answer(HttpStatus.GONE, "lock-lost", ex, request, Map.of("lockPath", ex.getPath()));
	}

	/**
	 * Answer a call whose key cannot name a lock.
	 * @param ex the exception
	 * @param request the request
	 * @return 400 {@code bad-request}
	 */
	@ExceptionHandler
	public ResponseEntity<Map<String, Object>> handleInvalidLockPath(InvalidLockPathException ex,
			WebRequest request) {
		return answer(HttpStatus.BAD_REQUEST, "bad-request", ex, request, Map.of());
	}

	/**
	 * Answer a call that failed because ZooKeeper could not serve the lock.
	 * @param ex the exception
	 * @param request the request
	 * @return 503 {@code zookeeper-unavailable}
	 */
	@ExceptionHandler
	public ResponseEntity<Map<String, Object>> handleLockFailure(LockException ex, WebRequest request) {
		logger.warn("Lock service unavailable: " + ex.getMessage());
		return answer(HttpStatus.SERVICE_UNAVAILABLE, "zookeeper-unavailable", ex, request, Map.of());
	}

	/**
	 * Answer a transfer of more than the balance.
	 * @param ex the exception
	 * @param request the request
	 * @return 409 {@code insufficient-balance}, with {@code account}, {@code balance} and
	 * {@code amount}
	 */
	@ExceptionHandler
	public ResponseEntity<Map<String, Object>> handleInsufficientBalance(InsufficientBalanceException ex,
			WebRequest request) {
		return answer(HttpStatus.CONFLICT, "insufficient-balance", ex, request,
				Map.of("account", ex.getAccount(), "balance", ex.getBalance(), "amount", ex.getAmount()));
	}

	/**
	 * Answer a transfer naming an account that has no row.
	 * @param ex the exception
	 * @param request the request
	 * @return 404 {@code unknown-account}, with {@code account}
	 */
	@ExceptionHandler
	public ResponseEntity<Map<String, Object>> handleUnknownAccount(UnknownAccountException ex, WebRequest request) {
		return answer(HttpStatus.NOT_FOUND, "unknown-account", ex, request, Map.of("account", ex.getAccount()));
	}

	/**
	 * Answer any other failure: the outcome is unknown.
	 * @param ex the exception
	 * @param request the request
	 * @return 500 {@code unexpected}, with {@code exception} (the class name)
	 */
	@ExceptionHandler
	public ResponseEntity<Map<String, Object>> handleUnexpected(Exception ex, WebRequest request) {
		logger.error("Unexpected failure of a chaos workload", ex);
		return answer(HttpStatus.INTERNAL_SERVER_ERROR, "unexpected", ex, request,
				Map.of("exception", ex.getClass().getName()));
	}

	@Override
	protected @Nullable ResponseEntity<Object> handleExceptionInternal(Exception ex, @Nullable Object body,
			HttpHeaders headers, HttpStatusCode statusCode, WebRequest request) {
		boolean clientError = statusCode.is4xxClientError();
		HttpStatusCode status = clientError ? statusCode : HttpStatus.INTERNAL_SERVER_ERROR;
		if (!clientError) {
			logger.error("Unexpected failure of a chaos workload", ex);
		}
		return ResponseEntity.status(status)
			.headers(headers)
			.body(body(clientError ? "bad-request" : "unexpected", ex, request, Map.of()));
	}

	private static ResponseEntity<Map<String, Object>> answer(HttpStatusCode status, String error, Exception ex,
			WebRequest request, Map<String, Object> details) {
		return ResponseEntity.status(status).body(body(error, ex, request, details));
	}

	private static Map<String, Object> body(String error, Exception ex, WebRequest request,
			Map<String, Object> details) {
		Map<String, Object> body = new LinkedHashMap<>();
		body.put("error", error);
		body.put("message", String.valueOf(ex.getMessage()));
		String op = request.getParameter("op");
		if (op != null) {
			body.put("op", op);
		}
		body.putAll(details);
		return body;
	}

}
