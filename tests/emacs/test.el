;;; test.el --- Emacs's own LSP client (eglot) as a client of GradGuard.  -*- lexical-binding: t -*-
;; Run: emacs --batch -l <init.el: the eglot block of docs/editors.md> -l test.el
;; (tests/emacs/test_eglot.py: `gradguard` on PATH, train.py and a gradguard.toml selecting GG101
;; in the current directory).  Prints one "key: value" line per check on stdout and exits 0;
;; on a failure it prints "FAIL: why" and exits 1.

(require 'eglot)
(require 'flymake)
(setq eglot-sync-connect 60 eglot-connect-timeout 60)  ; a busy machine: wait for the server

(defun gg-say (key value) (princ (format "%s: %s\n" key value)))
(defun gg-fail (why) (gg-say "FAIL" why) (kill-emacs 1))
(defun gg-wait (predicate)
  "Poll PREDICATE for up to 60 s while processing the server's messages; its value."
  (let ((deadline (+ (float-time) 60)) value)
    (while (and (not (setq value (funcall predicate))) (< (float-time) deadline))
      (accept-process-output nil 0.05)
      (when (bound-and-true-p flymake-mode) (flymake-start)))
    value))

(condition-case err
    (progn
      ;; Visiting the file runs python-mode-hook: the documented `eglot-ensure', which connects
      ;; after the current command (there are no commands in batch mode: run the hook).
      (find-file "train.py")
      (run-hooks 'post-command-hook)
      (unless (gg-wait #'eglot-current-server) (gg-fail "the documented configuration started no server"))
      (gg-say "server" (mapconcat #'identity (process-command (jsonrpc--process (eglot-current-server))) " "))
      ;; 1. Diagnostics, through flymake, each on its exact range.
      (unless (gg-wait (lambda () (= (length (flymake-diagnostics)) 2))) (gg-fail "no GradGuard diagnostics"))
      (dolist (d (sort (flymake-diagnostics) (lambda (a b) (< (flymake-diagnostic-beg a) (flymake-diagnostic-beg b)))))
        (gg-say "diagnostic" (format "%s %s on `%s'"
                                     (flymake-diagnostic-type d)
                                     (if (string-match "GG[0-9]+" (flymake-diagnostic-text d)) (match-string 0 (flymake-diagnostic-text d)) "?")
                                     (buffer-substring (flymake-diagnostic-beg d) (flymake-diagnostic-end d)))))
      ;; 2. The quick fixes on the second one (the line with Chinese text and an emoji).
      (let ((d (car (last (flymake-diagnostics)))))
        (dolist (action (eglot-code-actions (flymake-diagnostic-beg d) (flymake-diagnostic-end d) "quickfix"))
          (gg-say "action" (plist-get action :title))))
      ;; 3. Fix the whole file (the documented command), save, and the server sees the result.
      (gradguard-fix-all)
      (save-buffer)
      (unless (gg-wait (lambda () (null (flymake-diagnostics)))) (gg-fail "diagnostics left after fixing the file"))
      (gg-say "after fix-all" (length (flymake-diagnostics)))
      (gg-say "detached" (how-many "append(loss.detach())" (point-min) (point-max)))
      (eglot-shutdown (eglot-current-server))
      (gg-say "done" "ok")
      (kill-emacs 0))
  (error (gg-fail (error-message-string err))))
