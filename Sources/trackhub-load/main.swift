print("trackhub-load")
